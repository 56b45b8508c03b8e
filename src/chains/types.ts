/**
 * The contract between a chain family's adapter and the one chain core (ARCHITECTURE "One chain
 * core"). An adapter only turns its node into normalised blocks and signs/broadcasts; tips,
 * confirmations, reorganisations, matching and crediting are the core's.
 */
import type { EntityManager } from 'typeorm';
import type { ChainTransferRow, TransferStatus } from '../db/entities/chain';

export interface BlockRef {
  height: number;
  hash: string;
}

export interface BlockHeader extends BlockRef {
  parentHash: string;
}

/** One value movement to an address, as the node reports it. */
export interface NormalisedTransfer {
  /** `native`, or the token contract exactly as configured (the catalogue's Coin.asset). */
  asset: string;
  /** Receiving address in the family's canonical form: bech32 lower-case, EIP-55 checksummed, Tron base58. */
  to: string;
  /** Base units (satoshi, wei, token units). */
  amount: bigint;
  txid: string;
  /** Output index (vout) or log index; 0 for an EVM native value transfer. */
  index: number;
  /**
   * The receiving address's watch key (ChainAdapter.watchKey), for a family that has one: the
   * core screens on it first and reads `to` only for the few transfers that pass.
   */
  watchKey?: Uint8Array;
}

export interface NormalisedSpend { txid: string; outpoint?: { txid: string; index: number }; from?: string; nonce?: number; }

export interface NormalisedBlock extends BlockHeader {
  transfers: NormalisedTransfer[];
  spends?: NormalisedSpend[];
}

export interface ChainAdapter {
  /** The config chain id this adapter serves. */
  readonly chainId: string;
  /** The node's best block. */
  tip(signal?: AbortSignal): Promise<BlockRef>;
  /** The header at `height` on the node's best chain (reorganisation walk-back). */
  header(height: number, signal?: AbortSignal): Promise<BlockHeader>;
  /** Blocks `from`..`to` inclusive on the node's best chain, in order, with every transfer they hold. */
  blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]>;
  /** Transfers waiting in the node's mempool, for families that have one (Bitcoin). */
  mempool?(signal?: AbortSignal): Promise<NormalisedTransfer[]>;
  /**
   * For a family whose addresses cost more to build than to match on bytes (Bitcoin): the bytes its
   * transfers carry as `watchKey` for payments to `address`; null for an address it cannot pay.
   */
  watchKey?(address: string): Uint8Array | null;
  close?(): Promise<void>;
}

/** Where and when the core saw a transfer: in a block, or in the mempool (block null, 0 confirmations). */
interface Sighting {
  chainId: string;
  coinId: string;
  txid: string;
  /** Incoming: the output or log index; outgoing: the spend's position among its transaction's. */
  index: number;
  blockHeight: number | null;
  blockHash: string | null;
  confirmations: number;
}

/** A transfer to a watched address. */
export interface IncomingObservation extends Sighting {
  direction?: 'incoming';
  address: string;
  /** Decimal string in coin units. */
  amount: string;
}

/**
 * A spend of the wallet's coins: a Bitcoin input spending an output the wallet received
 * (`outpoint`), or an EVM or Tron transaction sent from a watched address (`from`, `nonce`).
 */
export interface OutgoingObservation extends Sighting {
  direction: 'outgoing';
  outpoint?: { txid: string; index: number };
  from?: string;
  nonce?: number;
}

/** A transfer as the core saw it, which the TransferRecorder records. */
export type TransferObservation = IncomingObservation | OutgoingObservation;

/**
 * What handles the transfers of one kind of address and one direction (TransferRouter): the
 * payments side implements it (invoices; static deposits and payouts next). It is called inside the
 * core's write transaction with the transfer's row after the change and its status before it
 * (null: first sight), so the cursor, the transfer and the credit commit together.
 * seen → confirmed → (reverted); seen → reverted (dropped from the mempool, or its block reorganised
 * away); reverted → seen/confirmed (included again).
 */
export interface TransferHandler {
  onTransfer(em: EntityManager, transfer: ChainTransferRow, previous: TransferStatus | null): Promise<void>;
}
