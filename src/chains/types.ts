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
  /** The block's timestamp (seconds since 1970), where the node gives it with the tip: staleness (PRODUCT §15). */
  time?: number;
  /** The same to the millisecond, where the node gives it so (Tron): polls aligned to the block times (chains/poll-timing.ts). */
  timeMs?: number;
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

/**
 * One spend a block's transaction makes, for tracking the wallet's own outgoing transactions:
 * Bitcoin one per input (the outpoint it spends), EVM one per transaction (its sender and nonce).
 */
export interface NormalisedSpend {
  txid: string;
  outpoint?: { txid: string; index: number };
  from?: string;
  nonce?: number;
  /**
   * The sender's watch key (ChainAdapter.watchKey of `from`), for a family that has one: the core
   * screens on it and reads `from` (which may cost a hash to build) only for the few that pass.
   */
  watchKey?: Uint8Array;
}

export interface NormalisedBlock extends BlockHeader {
  transfers: NormalisedTransfer[];
  /** Every spend of the block's transactions; absent from a reader that lists none. */
  spends?: NormalisedSpend[];
}

/**
 * What the node says it is, or says about an amount, that cannot be true of the configured chain:
 * another network, a value no real output can have. The chain core treats it as node trouble (the
 * chain's coins in maintenance, the reason in `coinkeep status`) and credits nothing from it.
 */
export class NodeFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeFault';
  }
}

/**
 * The node could not answer now (PRODUCT §15): unreachable, timed out, rate limited or over its
 * quota (`retryAfterMs` when it said how long to wait), busy, still indexing or syncing. Nothing is
 * proven about what was asked: another endpoint, or the same one later, may answer. A chain's
 * transport throws it for every such answer, whatever the node's wording, so that failover,
 * backoff and maintenance are decided in one place.
 */
export class NodeUnavailable extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | null = null,
    readonly rateLimited = false,
  ) {
    super(message);
    this.name = 'NodeUnavailable';
  }
}

/**
 * Every endpoint of a chain is behind (PRODUCT §15): its newest block is older than the chain's
 * `stale_after_seconds`. The message is the reason `coinkeep status` shows (`node behind: newest
 * block 14 min old`); the chain's coins go to maintenance at once.
 */
export class NodeStale extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeStale';
  }
}

/**
 * A chain's endpoints as the chain core sees them (PRODUCT §15; chains/node-pool.ts builds it):
 * the tip of the first healthy endpoint that is not behind, the quorum on block hashes, and the
 * pace that keeps each endpoint's daily request budget.
 */
export interface ChainNodeSet {
  /** The newest block of the first endpoint that answers and is not stale; NodeStale when every one that answers is behind. */
  tip(signal?: AbortSignal): Promise<BlockRef>;
  /**
   * The highest height at or below `top` whose block hash (as `ours` gives it: what the core
   * recorded) the chain's quorum of endpoints report; -1 when none. `top` itself with a quorum of 1.
   */
  agreedHeight(top: number, ours: (height: number) => Promise<string | undefined>, signal?: AbortSignal): Promise<number>;
  /** The pause before the next poll: `baseMs`, stretched so no endpoint's `requests_per_day` is overspent. */
  pollDelayMs(baseMs: number): number;
}

/**
 * The node keeps no state at the block asked for (a node without archive state keeps the newest
 * 128 blocks: geth's "missing trie node", erigon's and reth's pruned state): balances at that
 * height cannot be read from it, those at a recent block can. Not node trouble: callers that
 * read past state fall back in their own correct way (the slow scan of archived addresses,
 * `ledger reconcile`).
 */
export class StateUnavailable extends Error {
  constructor(
    message: string,
    readonly height: number,
  ) {
    super(message);
    this.name = 'StateUnavailable';
  }
}

/**
 * The node refused a transaction for what it is (an invalid signature or script, a fee below the
 * node's floor, an expired or malformed transaction), as opposed to what the node is going through
 * (busy, rate limited, out of peers, still syncing) or an answer that may mean it is already mined
 * (Bitcoin "missing inputs", EVM "nonce too low"). Only this is proof that a transaction no node
 * accepted can never be mined (PRODUCT §14); anything else a broadcast throws proves nothing.
 */
export class TransactionRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransactionRefused';
  }
}

/** What a node's answer to a broadcast says of the transaction: held already, refused for what it is, or nothing sure. */
export type BroadcastAnswer = 'known' | 'refused' | 'unsure';

/** The current price of getting a transaction mined, per family. */
export type FeeQuote =
  | { kind: 'btc'; satPerVbyte: number; source: 'node' | 'fallback' }
  /** evm `legacy`: a chain of fee_model legacy: transactions pay `maxFeePerGas` as their gas price (type 0, EIP-155). */
  /**
   * evm: `transferGas` a native transfer's gas when not 21,000 (Arbitrum), `l1Fee` the L1 data fee
   * reserved per transaction (OP-stack): src/chains/evm/fee-model.ts.
   */
  | { kind: 'evm'; baseFeePerGas: bigint; maxPriorityFeePerGas: bigint; maxFeePerGas: bigint; legacy?: boolean; transferGas?: bigint; l1Fee?: bigint }
  | { kind: 'tron'; sunPerEnergy: bigint; sunPerBandwidth: bigint };

/** A payment a payout means to send, for its cost estimate (ChainSender.estimateTransfer). */
export interface PlannedTransfer {
  /** The sending address (the family's canonical form). */
  from: string;
  to: string;
  /** `native`, or the token contract as configured. */
  asset: string;
  /** Base units. */
  amount: bigint;
}

/**
 * What a planned payment will take on an account-resource chain (Tron), from the node's dry run of
 * the call with the recipient's current storage and the sender's current resources.
 */
export interface TransferEstimate {
  kind: 'tron';
  /** Energy the call uses (0 for a TRX transfer): about twice to a recipient holding none of the token yet. */
  energy: number;
  /** Bandwidth bytes the transaction takes (an upper bound of its signed size). */
  bandwidth: number;
  /** Sun that creating the recipient's account costs (a TRX payment to a never-used address), else 0. */
  activationSun: bigint;
  /** Sun the chain will burn: the energy and bandwidth the sender's staked, delegated and free resources do not cover, plus the activation. */
  burnSun: bigint;
  /** The `fee_limit` to set on a contract call: all its energy at the current price, with a margin; 0 for TRX. */
  feeLimit: bigint;
}

/** A signed transaction as it was broadcast: its id and its bytes (hex), which say what it spends. */
export interface SentTransaction {
  txid: string;
  raw: string;
}

/**
 * Where a broadcast transaction stands on the node: waiting in its mempool; mined (`succeeded`
 * false for an EVM transaction that reverted: mined, fee paid, nothing moved); replaced or
 * double-spent by another transaction that the chain holds or waits for (`conflicted`); or not
 * known to the node at all (`unknown`: dropped, or never arrived; safe to broadcast again).
 */
export type SentStatus =
  { state: 'mempool' } | { state: 'mined'; height: number; blockHash: string; succeeded: boolean } | { state: 'conflicted' } | { state: 'unknown' };

/** The read half of a chain's adapter: all the chain core needs to watch it. */
export interface ChainReader {
  /** The config chain id this adapter serves. */
  readonly chainId: string;
  /** The node's best block. */
  tip(signal?: AbortSignal): Promise<BlockRef>;
  /** The header at `height` on the node's best chain (reorganisation walk-back). */
  header(height: number, signal?: AbortSignal): Promise<BlockHeader>;
  /** Blocks `from`..`to` inclusive on the node's best chain, in order, with every transfer they hold. */
  blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]>;
  /**
   * Account families whose node answers balances at a past block (EVM): the balance of each of
   * `addresses` in each of `assets` (`native` or a token contract as configured) at block `height`,
   * in base units, `[address][asset]`. The slow scan of archived addresses reads blocks only for the
   * addresses whose balance moved; a family without it has every archived address's blocks read.
   * `height` null: the newest block. Throws StateUnavailable when the node keeps no state there.
   */
  balancesAt?(addresses: readonly string[], assets: readonly string[], height: number | null, signal?: AbortSignal): Promise<bigint[][]>;
  /** Transfers waiting in the node's mempool, for families that have one (Bitcoin). */
  mempool?(signal?: AbortSignal): Promise<NormalisedTransfer[]>;
  /**
   * For a family whose addresses cost more to build than to match on bytes (Bitcoin): the bytes its
   * transfers carry as `watchKey` for payments to `address`; null for an address it cannot pay.
   */
  watchKey?(address: string): Uint8Array | null;
  /** The chain's endpoints behind this reader (failover, staleness, quorum, pacing); absent for a reader over one node. */
  readonly nodes?: ChainNodeSet;
  close?(): Promise<void>;
}

/** The send half: what a payout needs from the node. */
export interface ChainSender {
  /** The fee that gets a transaction mined soon (Bitcoin: within the configured target blocks). */
  feeQuote(signal?: AbortSignal): Promise<FeeQuote>;
  /** Token families: what a configured token's contract answers to `decimals()`; null when it answers no such number. */
  tokenDecimals?(contract: string, signal?: AbortSignal): Promise<number | null>;
  /**
   * Account-resource families (Tron): what sending `transfer` will take (energy, bandwidth, TRX
   * burnt, fee_limit), so a payout reserves what the chain will really take.
   */
  estimateTransfer?(transfer: PlannedTransfer, signal?: AbortSignal): Promise<TransferEstimate>;
  /**
   * Hands a signed transaction (hex) to the node; returns its txid. Broadcasting it again is
   * harmless: one the node already holds counts as sent. Throws TransactionRefused when the node
   * refuses the transaction itself; any other error says nothing of the transaction.
   */
  broadcast(rawHex: string, signal?: AbortSignal): Promise<string>;
  /**
   * Account families' sends (sweeps, top-ups): what the node says of a transaction this daemon
   * broadcast. A hint for rebroadcasting and replacing, never the proof that fails a payout.
   */
  sentStatus?(sent: SentTransaction, signal?: AbortSignal): Promise<SentStatus>;
  /** Account families (EVM): the next nonce of `address`, counting mined transactions only and counting the mempool too. */
  nonce?(address: string, signal?: AbortSignal): Promise<{ latest: number; pending: number }>;
  /**
   * Families with a payout engine: whether `address` is an address of this network, in its
   * canonical form, that a plain payment can reach (Bitcoin: a standard output template). Families
   * without one do not offer withdrawals.
   */
  payable?(address: string): boolean;
  /** With `payable`: the smallest amount one payment output may carry, in base units (dust). */
  readonly minimumPayment?: bigint;
  /** With `payable`, for families whose addresses have several spellings (EVM case): the one the wallet stores. */
  canonicalAddress?(address: string): string;
}

/**
 * What `coinkeep ledger reconcile` asks a node about the wallet: the outputs it stored (UTXO
 * families) or every address it issued on the chain (account families), and the assets to count.
 */
export interface HoldingsQuery {
  /** Bitcoin: every output the wallet received and still counts as its own. */
  outputs: ReadonlyArray<{ txid: string; index: number }>;
  /** EVM, Tron: every wallet address of the chain. */
  addresses: readonly string[];
  /** `native` and the token contracts as configured (the catalogue's Coin.asset). */
  assets: readonly string[];
  /** The block to answer for where the node keeps past state (EVM: the core's scanned height); null for the tip. */
  height: number | null;
}

/** The node's side of a reconciliation, per chain family. */
export interface HoldingsReader {
  /**
   * Per asset of the query, in base units: the value of those outputs that are unspent in a block
   * (UTXO), or the balances of those addresses (accounts). Many outputs or addresses are asked in
   * batches, never one round trip each.
   */
  holdings(query: HoldingsQuery, signal?: AbortSignal): Promise<Map<string, bigint>>;
}

/** A chain family's adapter: it turns its node into normalised blocks, sends what the wallet signed, and counts what the wallet holds. */
export interface ChainAdapter extends ChainReader, ChainSender, HoldingsReader {}

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
  /** The id of `address`'s row, as the watched set gives it: the row is read by its primary key. */
  addressId: string;
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
  /** With `from`: the id of its address row, as the watched set gives it. */
  addressId?: string;
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
