/**
 * EIP-1559 transactions and ERC-20 call data serialised by hand must be the bytes ethers makes of
 * the same fields, for the edge cases of RLP (zero, one byte under 0x80, 55 and 56 byte strings,
 * long data, large chain ids) and for signatures with either parity and short r or s.
 */
import test from 'ava';
import { Interface, Signature, Transaction } from 'ethers';
import { eip1559Signed, eip1559SigningHash, type Eip1559Fields } from '../../../../src/chains/evm/eip1559';
import { erc20BalanceOfData, erc20TransferData } from '../../../../src/chains/evm/erc20';

const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A deterministic stream of bytes (no randomness in a unit test). */
function bytes(seed: number, n: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = x & 0xff;
  }
  return out;
}

const cases: Eip1559Fields[] = [
  { chainId: 1, nonce: 0, maxPriorityFeePerGas: 0n, maxFeePerGas: 0n, gasLimit: 21_000n, to: TO, value: 0n },
  { chainId: 31337, nonce: 127, maxPriorityFeePerGas: 1n, maxFeePerGas: 14n, gasLimit: 51_577n, to: TO.toLowerCase(), value: 0x7fn, data: '0x' },
  {
    chainId: 137,
    nonce: 128,
    maxPriorityFeePerGas: 30_000_000_000n,
    maxFeePerGas: 2n ** 64n,
    gasLimit: 65_000n,
    to: TO,
    value: 10n ** 18n,
    data: erc20TransferData(TO, 12_500_000n),
  },
  {
    chainId: 2 ** 40,
    nonce: 2 ** 31,
    maxPriorityFeePerGas: 255n,
    maxFeePerGas: 256n,
    gasLimit: 30_000_000n,
    to: TO,
    value: 2n ** 255n,
    data: `0x${bytes(1, 55).toString('hex')}`,
  },
  { chainId: 5, nonce: 1, maxPriorityFeePerGas: 1n, maxFeePerGas: 1n, gasLimit: 1n, to: TO, value: 1n, data: `0x${bytes(2, 56).toString('hex')}` },
  { chainId: 5, nonce: 1, maxPriorityFeePerGas: 1n, maxFeePerGas: 1n, gasLimit: 1n, to: TO, value: 1n, data: `0x${bytes(3, 300).toString('hex')}` },
  { chainId: 5, nonce: 1, maxPriorityFeePerGas: 1n, maxFeePerGas: 1n, gasLimit: 1n, to: TO, value: 1n, data: '0x00' },
  { chainId: 5, nonce: 1, maxPriorityFeePerGas: 1n, maxFeePerGas: 1n, gasLimit: 1n, to: TO, value: 1n, data: '0x80' },
];

const ethersTx = (f: Eip1559Fields) =>
  Transaction.from({
    type: 2,
    chainId: f.chainId,
    nonce: f.nonce,
    maxPriorityFeePerGas: f.maxPriorityFeePerGas,
    maxFeePerGas: f.maxFeePerGas,
    gasLimit: f.gasLimit,
    to: f.to,
    value: f.value,
    data: f.data ?? '0x',
  });

test('the hash a sender signs is the one ethers computes for the same fields', (t) => {
  for (const f of cases) t.is(Buffer.from(eip1559SigningHash(f)).toString('hex'), ethersTx(f).unsignedHash.slice(2));
});

test('a signed transaction is the bytes ethers serialises, with its hash as txid, for either parity and r or s with leading zero bytes', (t) => {
  const signatures = [
    { r: bytes(4, 32), s: bytes(5, 32), yParity: 0 as const },
    { r: Buffer.concat([Buffer.alloc(1), bytes(6, 31)]), s: Buffer.concat([Buffer.alloc(2), bytes(7, 30)]), yParity: 1 as const },
  ];
  for (const f of cases)
    for (const sig of signatures) {
      // ethers refuses an s above half the order; the low half is what signers produce.
      const s = Buffer.from(sig.s);
      s[0]! &= 0x7f;
      const tx = ethersTx(f);
      tx.signature = Signature.from({ r: `0x${Buffer.from(sig.r).toString('hex')}`, s: `0x${s.toString('hex')}`, yParity: sig.yParity });
      const ours = eip1559Signed(f, { ...sig, s });
      t.is(ours.raw, tx.serialized);
      t.is(ours.txid, tx.hash!);
    }
});

test('ERC-20 transfer and balanceOf call data are what ethers encodes, and a bad address or amount is refused', (t) => {
  const erc20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)', 'function balanceOf(address owner) view returns (uint256)']);
  for (const amount of [0n, 1n, 12_500_000n, 2n ** 256n - 1n]) t.is(erc20TransferData(TO, amount), erc20.encodeFunctionData('transfer', [TO, amount]));
  t.is(erc20TransferData(TO.toLowerCase(), 5n), erc20.encodeFunctionData('transfer', [TO, 5n]));
  t.is(erc20BalanceOfData(TO), erc20.encodeFunctionData('balanceOf', [TO]));
  t.throws(() => erc20TransferData('0x1234', 1n));
  t.throws(() => erc20TransferData(TO, -1n));
  t.throws(() => erc20TransferData(TO, 2n ** 256n));
  t.throws(() => erc20BalanceOfData(`${TO}00`));
});

test('a transaction field that cannot be serialised is refused', (t) => {
  const base = cases[0]!;
  t.throws(() => eip1559SigningHash({ ...base, to: '0xabc' }));
  t.throws(() => eip1559SigningHash({ ...base, data: '0x123' }));
  t.throws(() => eip1559SigningHash({ ...base, value: -1n }));
});
