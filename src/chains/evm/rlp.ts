/** The few RLP encodings the wallet's own EVM transactions need (eip1559.ts, legacy-tx.ts). */

/** Hex, 0x-prefixed, whole bytes. */
export const HEX = /^0x([0-9a-fA-F]{2})*$/;

/** Big-endian bytes as RLP wants an integer: without leading zero bytes (zero: empty). */
export function minimal(bytes: Uint8Array): Buffer {
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return Buffer.from(bytes.subarray(i));
}

/** A non-negative integer as RLP wants it: big-endian, no leading zero byte (zero: empty). */
export function uint(value: bigint | number): Buffer {
  const v = BigInt(value);
  if (v < 0n) throw new Error('a transaction field is negative');
  if (v === 0n) return Buffer.alloc(0);
  const hex = v.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

export function length(prefix: number, n: number): Buffer {
  if (n <= 55) return Buffer.from([prefix + n]);
  const len = uint(n);
  return Buffer.concat([Buffer.from([prefix + 55 + len.length]), len]);
}

export function item(bytes: Buffer): Buffer {
  if (bytes.length === 1 && bytes[0]! < 0x80) return bytes;
  return Buffer.concat([length(0x80, bytes.length), bytes]);
}

export const EMPTY_LIST = Buffer.from([0xc0]);
