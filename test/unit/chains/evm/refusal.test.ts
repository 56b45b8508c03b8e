/**
 * What other EVM clients' broadcast answers mean (issue 30 §1): Besu's "Known transaction" is held
 * already; erigon's "could not replace existing tx", older Nethermind's "OldNonce", geth's "nonce too
 * low" and "replacement transaction underpriced" say the nonce is used, which proves nothing about
 * the transaction itself; rate limits and a node still indexing are never a refusal.
 */
import test from 'ava';
import { evmBroadcastAnswer, evmNonceTaken } from '../../../../src/chains/evm/refusal';

test('geth, Besu and Nethermind answers for a transaction the node holds already read as known', (t) => {
  for (const m of ['already known', 'Known transaction', 'AlreadyKnown', 'TRANSACTION_ALREADY_KNOWN']) t.is(evmBroadcastAnswer(true, m), 'known', m);
});

test('answers that the nonce is used (geth, erigon, Besu, Nethermind) are recognised and are not a refusal', (t) => {
  for (const m of [
    'nonce too low',
    'Nonce too low',
    'replacement transaction underpriced',
    'Replacement transaction underpriced',
    'could not replace existing tx',
    'OldNonce',
    'ReplacementNotAllowed',
    'NONCE_TOO_LOW',
  ]) {
    t.true(evmNonceTaken(m), m);
    t.is(evmBroadcastAnswer(true, m), 'unsure', m);
  }
  for (const m of ['insufficient funds for gas * price + value', 'intrinsic gas too low', 'transaction indexing is in progress', 'rate limited'])
    t.false(evmNonceTaken(m), m);
});

test('rate limits, quotas and a node still indexing prove nothing of the transaction', (t) => {
  for (const m of [
    'daily request count exceeded, request rate limited',
    'project ID request rate exceeded',
    'Your app has exceeded its compute units per second capacity',
    'transaction indexing is in progress',
    'header not found',
  ])
    t.is(evmBroadcastAnswer(true, m), 'unsure', m);
});
