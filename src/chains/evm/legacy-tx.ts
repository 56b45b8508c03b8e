import { keccak256 } from 'ethers/crypto';
import { addressDigits } from './address-text';
import { HEX, item, length, minimal, uint } from './rlp';

/**
 * Legacy (type 0) transactions with EIP-155 replay protection, for chains without EIP-1559 (geth
 * answers a base fee of 0 there and refuses type 2): RLP([nonce, gasPrice, gasLimit, to, value,
 * data, chainId, 0, 0]) to be signed; RLP([nonce, gasPrice, gasLimit, to, value, data, v, r, s])
 * once signed, v = chainId × 2 + 35 + the recovery id. Tested byte for byte against ethers in
 * test/unit/chains/evm/legacy-tx.test.ts.
 */
export interface LegacyFields {
  chainId: number;
  nonce: number;
  gasPrice: bigint;
  gasLimit: bigint;
  to: string;
  value: bigint;
  /** Hex, 0x-prefixed ('0x' or absent: none). */
  data?: string;
}

function fieldsOf(tx: LegacyFields): Buffer[] {
  const data = tx.data ?? '0x';
  if (!HEX.test(data)) throw new Error('transaction data is not hex');
  return [uint(tx.nonce), uint(tx.gasPrice), uint(tx.gasLimit), Buffer.from(addressDigits(tx.to), 'hex'), uint(tx.value), Buffer.from(data.slice(2), 'hex')];
}

function list(items: Buffer[]): Buffer {
  const body = Buffer.concat(items.map(item));
  return Buffer.concat([length(0xc0, body.length), body]);
}

/** The hash a sender signs (32 bytes). */
export function legacySigningHash(tx: LegacyFields): Uint8Array {
  return Buffer.from(keccak256(list([...fieldsOf(tx), uint(tx.chainId), uint(0), uint(0)])).slice(2), 'hex');
}

/** The signed transaction (hex, as eth_sendRawTransaction takes it) and its hash, the txid. */
export function legacySigned(tx: LegacyFields, signature: { r: Uint8Array; s: Uint8Array; yParity: 0 | 1 }): { raw: string; txid: string } {
  const v = BigInt(tx.chainId) * 2n + 35n + BigInt(signature.yParity);
  const raw = list([...fieldsOf(tx), uint(v), minimal(signature.r), minimal(signature.s)]);
  return { raw: `0x${raw.toString('hex')}`, txid: keccak256(raw) };
}
