/**
 * Legacy (type 0, EIP-155) transactions for chains without EIP-1559: the bytes signed and sent are
 * ethers' own, byte for byte, for a plain transfer and a token call, and the sender recovers.
 */
import test from 'ava';
import { Transaction, Wallet } from 'ethers';
import * as ecc from 'tiny-secp256k1';
import { legacySigned, legacySigningHash, type LegacyFields } from '../../../../src/chains/evm/legacy-tx';

const KEY = '0x' + '11'.repeat(32);

for (const [name, tx] of [
  [
    'a transfer of ether',
    { chainId: 56, nonce: 0, gasPrice: 3_000_000_000n, gasLimit: 21_000n, to: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', value: 10n ** 17n },
  ],
  [
    'a token call with data',
    {
      chainId: 31337,
      nonce: 300,
      gasPrice: 1n,
      gasLimit: 65_000n,
      to: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      value: 0n,
      data: '0xa9059cbb' + '00'.repeat(64),
    },
  ],
] as Array<[string, LegacyFields]>) {
  test(`${name}: the signing hash, signed bytes and txid are ethers' own`, (t) => {
    const ours = { ...tx };
    const theirs = Transaction.from({
      type: 0,
      chainId: tx.chainId,
      nonce: tx.nonce,
      gasPrice: tx.gasPrice,
      gasLimit: tx.gasLimit,
      to: tx.to,
      value: tx.value,
      data: tx.data ?? '0x',
    });
    t.is(Buffer.from(legacySigningHash(ours)).toString('hex'), theirs.unsignedHash.slice(2));
    const { signature, recoveryId } = ecc.signRecoverable(legacySigningHash(ours), Buffer.from(KEY.slice(2), 'hex'));
    const signed = legacySigned(ours, { r: signature.subarray(0, 32), s: signature.subarray(32), yParity: recoveryId as 0 | 1 });
    const parsed = Transaction.from(signed.raw);
    t.is(parsed.type, 0);
    t.is(parsed.chainId, BigInt(tx.chainId));
    t.is(parsed.from, new Wallet(KEY).address);
    t.is(parsed.hash, signed.txid);
    theirs.signature = parsed.signature;
    t.is(theirs.serialized, signed.raw);
  });
}
