import { tronToHex } from './derive';

/** The contracts the wallet signs on Tron: payments, TRC-20 calls, and Stake 2.0 energy. */
export type TronContractType =
  'TransferContract' | 'TriggerSmartContract' | 'FreezeBalanceV2Contract' | 'DelegateResourceContract' | 'UnDelegateResourceContract';

export interface TronContract {
  type: TronContractType;
  /** The contract's fields as java-tron's JSON has them: addresses in hex (41 ‖ 20 bytes), amounts in sun. */
  value: Record<string, unknown>;
}

/** The block a transaction references (TaPoS: it is valid only on a chain holding that block). */
export interface TronRefBlock {
  blockId: string;
  /** The block's time (ms): the expiration counts from it. */
  timestamp: number;
}

/** A signed transaction: its id, the protobuf `/wallet/broadcasthex` takes (hex) and when it expires. */
export interface SignedTron {
  txid: string;
  raw: string;
  expiration: number;
}

/** 41 ‖ the 20 address bytes, as contract fields carry an address. */
export const tronHexAddress = (base58: string): string => '41' + tronToHex(base58).slice(2);

const word = (hex: string): string => hex.padStart(64, '0');

/** A TRC-20 `transfer(to, amount)` call's data. */
export const trc20TransferData = (to: string, amount: bigint): string => 'a9059cbb' + word(tronToHex(to).slice(2)) + word(amount.toString(16));

/**
 * Builds a transaction offline (tronweb's protobuf encoding, no node call) on `ref`, expiring
 * `expiresInMs` after it, and signs its id with `sign` (65 bytes r ‖ s ‖ v, hex): the id is the
 * sha256 of raw_data, so the same fields on the same block give the same transaction.
 */
export function signTronContract(
  contract: TronContract,
  ref: TronRefBlock,
  expiresInMs: number,
  sign: (txid: string) => string,
  feeLimit?: bigint,
): SignedTron {
  const expiration = ref.timestamp + expiresInMs;
  const raw: Record<string, unknown> = {
    contract: [{ parameter: { value: contract.value, type_url: `type.googleapis.com/protocol.${contract.type}` }, type: contract.type }],
    ref_block_bytes: ref.blockId.slice(12, 16),
    ref_block_hash: ref.blockId.slice(16, 32),
    expiration,
    timestamp: ref.timestamp,
    ...(feeLimit === undefined ? {} : { fee_limit: Number(feeLimit) }),
  };
  // Loaded on the first Tron signature: tronweb takes a few tenths of a second of CPU to load, for every daemon start otherwise.
  const { utils } = require('tronweb') as typeof import('tronweb');
  const pb = utils.transaction.txJsonToPb({ raw_data: raw, visible: false } as never) as unknown as {
    addSignature(b: Uint8Array): void;
    serializeBinary(): Uint8Array;
  };
  const txid = utils.transaction.txPbToTxID(pb as never).replace(/^0x/, '');
  pb.addSignature(Buffer.from(sign(txid), 'hex'));
  return { txid, raw: Buffer.from(pb.serializeBinary()).toString('hex'), expiration };
}
