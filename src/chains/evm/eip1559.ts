import { keccak256 } from 'ethers';
import { addressDigits } from './address-text';

/**
 * EIP-1559 (type 2) transactions serialised by hand: 0x02 ‖ RLP([chainId, nonce, maxPriorityFeePerGas,
 * maxFeePerGas, gasLimit, to, value, data, accessList (empty)]) to be signed, and the same with
 * yParity, r and s once signed. ethers' Transaction computes each address's checksum (a hash) and
 * serialises twice for its hash; a pass of a thousand sweeps felt it. Tested byte for byte against
 * ethers in test/unit/chains/evm/eip1559.test.ts.
 */
export interface Eip1559Fields {
  chainId: number;
  nonce: number;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  gasLimit: bigint;
  to: string;
  value: bigint;
  /** Hex, 0x-prefixed ('0x' or absent: none). */
  data?: string;
}

const HEX = /^0x([0-9a-fA-F]{2})*$/;

/** Big-endian bytes as RLP wants an integer: without leading zero bytes (zero: empty). */
function minimal(bytes: Uint8Array): Buffer {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return Buffer.from(bytes.subarray(i));
}

/** A non-negative integer as RLP wants it: big-endian, no leading zero byte (zero: empty). */
function uint(value: bigint | number): Buffer {
  const v = BigInt(value);
  if (v < 0n) throw new Error('a transaction field is negative');
  if (v === 0n) return Buffer.alloc(0);
  const hex = v.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

function length(prefix: number, n: number): Buffer {
  if (n <= 55) return Buffer.from([prefix + n]);
  const len = uint(n);
  return Buffer.concat([Buffer.from([prefix + 55 + len.length]), len]);
}

function item(bytes: Buffer): Buffer {
  if (bytes.length === 1 && bytes[0]! < 0x80) return bytes;
  return Buffer.concat([length(0x80, bytes.length), bytes]);
}

const EMPTY_LIST = Buffer.from([0xc0]);

function fieldsOf(tx: Eip1559Fields): Buffer[] {
  const to = Buffer.from(addressDigits(tx.to), 'hex');
  const data = tx.data ?? '0x';
  if (!HEX.test(data)) throw new Error('transaction data is not hex');
  return [uint(tx.chainId), uint(tx.nonce), uint(tx.maxPriorityFeePerGas), uint(tx.maxFeePerGas), uint(tx.gasLimit), to, uint(tx.value), Buffer.from(data.slice(2), 'hex')];
}

/** 0x02 ‖ RLP(fields ‖ access list ‖ more): `more` written as RLP items after the empty access list. */
function typed(tx: Eip1559Fields, more: Buffer[]): Buffer {
  const body = Buffer.concat([...fieldsOf(tx).map(item), EMPTY_LIST, ...more.map(item)]);
  return Buffer.concat([Buffer.from([0x02]), length(0xc0, body.length), body]);
}

/** The hash a sender signs (32 bytes). */
export function eip1559SigningHash(tx: Eip1559Fields): Uint8Array {
  return Buffer.from(keccak256(typed(tx, [])).slice(2), 'hex');
}

/** The signed transaction (hex, as eth_sendRawTransaction takes it) and its hash, the txid. */
export function eip1559Signed(tx: Eip1559Fields, signature: { r: Uint8Array; s: Uint8Array; yParity: 0 | 1 }): { raw: string; txid: string } {
  const raw = typed(tx, [uint(signature.yParity), minimal(signature.r), minimal(signature.s)]);
  return { raw: `0x${raw.toString('hex')}`, txid: keccak256(raw) };
}
