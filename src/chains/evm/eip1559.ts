import { keccak256 } from 'ethers/crypto';
import { addressDigits } from './address-text';
import { EMPTY_LIST, HEX, item, length, minimal, uint } from './rlp';

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

function fieldsOf(tx: Eip1559Fields): Buffer[] {
  const to = Buffer.from(addressDigits(tx.to), 'hex');
  const data = tx.data ?? '0x';
  if (!HEX.test(data)) throw new Error('transaction data is not hex');
  return [
    uint(tx.chainId),
    uint(tx.nonce),
    uint(tx.maxPriorityFeePerGas),
    uint(tx.maxFeePerGas),
    uint(tx.gasLimit),
    to,
    uint(tx.value),
    Buffer.from(data.slice(2), 'hex'),
  ];
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
