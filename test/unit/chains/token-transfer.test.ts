import test from 'ava';
import { deliveredBy, TRANSFER_TOPIC, transferLog } from '../../../src/chains/token-transfer';

const word = (hex: string) => hex.padStart(64, '0');
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

test('a Transfer log reads the same from an EVM receipt (0x, mixed case) and a Tron transaction info (41 address, no 0x)', (t) => {
  const evm = transferLog(`0x${'C'.repeat(40)}`, [TRANSFER_TOPIC, `0x${word(A.toUpperCase())}`, `0x${word(B)}`], `0x${word('64')}`);
  const tron = transferLog(`41${'c'.repeat(40)}`, [TRANSFER_TOPIC.slice(2), word(A), word(B)], word('64'));
  t.deepEqual(evm, { contract: 'c'.repeat(40), from: A, to: B, amount: 100n });
  t.deepEqual(tron, evm);
});

test('other events and lookalikes are not Transfer logs: another topic, an ERC-721 Transfer (4 topics), a topic that is not an address', (t) => {
  t.is(transferLog(A, [`0x${'1'.repeat(64)}`, word(A), word(B)], word('1')), null);
  t.is(transferLog(A, [TRANSFER_TOPIC, word(A), word(B), word('1')], '0x'), null);
  t.is(transferLog(A, [TRANSFER_TOPIC, `1${word(A).slice(1)}`, word(B)], word('1')), null);
});

test('what a transaction delivered is the sum of its Transfers of the contract from the sender to the payee, and nothing else', (t) => {
  const logs = [
    { contract: 'c'.repeat(40), from: A, to: B, amount: 99n },
    { contract: 'c'.repeat(40), from: A, to: 'f'.repeat(40), amount: 1n },
    { contract: 'd'.repeat(40), from: A, to: B, amount: 5n },
  ];
  t.is(deliveredBy(logs, { contract: 'c'.repeat(40), from: A, to: B }), 99n);
  t.is(deliveredBy([], { contract: 'c'.repeat(40), from: A, to: B }), 0n);
});
