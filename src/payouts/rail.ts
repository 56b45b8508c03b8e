/**
 * The contract between the one payout worker and a chain family (issue 16 §3): the worker claims
 * withdrawals, stores what a rail signed before anything is broadcast, broadcasts the stored bytes,
 * watches them, completes or fails the withdrawals and moves their money; a rail only builds, signs,
 * broadcasts, replaces and releases its chain's payout transactions, and says what each spends.
 * Whether a candidate was mined, or something else took what it spends, the worker reads from the
 * chain core's own scanned blocks (PayoutEvidence), never from a lookup by txid (PRODUCT §14).
 *
 * A payout is one transaction paying one or more withdrawals of one account (one output or one
 * transfer each), together with every replacement of it (its candidates): at most one candidate
 * can ever be mined, and whichever is completes every withdrawal of the payout. A rail never
 * decides a withdrawal's status and never moves money; it reads and writes only in the
 * transaction it is handed, and talks to its node only outside one.
 *
 * Stability: other chain families implement this interface in parallel; change it additively only.
 */
import type { EntityManager } from 'typeorm';
import type { CandidateKind } from '../db/entities/payouts';

/** One claimed withdrawal a payout pays. */
export interface PayoutOrder {
  withdrawalId: string;
  /** The withdrawal's coin (the chain's native coin, or a token of it). */
  coinId: string;
  /** The destination in the chain's canonical form, as the API accepted it. */
  address: string;
  /** In the coin's base units (satoshi, wei, token units, sun). */
  amount: bigint;
  /**
   * What the withdrawal reserved for its network fee, in the coin's base units: the most the
   * merchant is charged for it, so what a payout may take from the account's coins for its fee.
   */
  networkFee?: bigint;
}

/**
 * A signed transaction of a payout, as the worker stores it before its first broadcast: the worker
 * keeps every candidate a payout ever had (its first and each replacement), with its bytes.
 */
export interface PayoutCandidate {
  txid: string;
  /** The signed transaction exactly as it is broadcast (hex). Stored sealed. */
  raw: string;
  /**
   * The network fee it pays, in base units of the chain's native coin (EVM: the most it can pay,
   * gas limit times max fee per gas; Tron: the most it may burn, bandwidth at the burn price plus its
   * account creation or its burn or fee_limit; the chain may take less, see `PayoutRail.feePaid`).
   */
  fee: bigint;
  /**
   * Family-specific facts the rail needs again later, as plain JSON (Bitcoin: the coins spent, the
   * fee rate and size; EVM and Tron: the sender, the nonce, the fee caps). The worker stores it
   * and hands it back untouched.
   */
  data: Record<string, unknown>;
  /** A candidate paying the withdrawals (the default), or a cancel paying the coins back to the wallet. */
  kind?: CandidateKind;
}

/** Where in a payout's transaction a withdrawal is paid (the same in every candidate). */
export interface PayoutLeg {
  withdrawalId: string;
  /** Output index (Bitcoin vout); 0 for an account family's single transfer. */
  output: number;
}

/**
 * What a payout spends that only one transaction can (PRODUCT §14): Bitcoin the received outputs it
 * spends (their chain_transfers ids); EVM a sender's nonce; Tron nothing (a transaction has no
 * nonce; it expires instead, `PayoutRail.expiredBy`).
 */
export type SpendKey = { coins: readonly string[] } | { sender: string; nonce: number } | null;

/**
 * A withdrawal a rail will not pay, and why (in the merchant's words: it becomes `failure_reason`).
 * Besides a bad destination or an amount below dust: one the account's coins on chain cannot fund
 * while nothing that could bring them is on its way (see `notFunded`).
 */
export interface RefusedOrder {
  withdrawalId: string;
  reason: string;
}

/**
 * What `PayoutRail.build` made of a batch of orders: a payout for those it can pay, and the orders
 * it refuses on their own (a bad destination, an amount below the chain's dust): those fail alone,
 * the others are paid. Orders neither paid (in `legs`) nor refused stay pending for a later run:
 * `payout` null with no refusal means "not now" for all (the account's coins are reserved by
 * payouts in flight, or its nonce is busy).
 */
export interface RailBuild {
  payout: {
    candidate: PayoutCandidate;
    legs: PayoutLeg[];
    /**
     * Names what the payout reserved in the caller's transaction (Bitcoin: its coins' reservation;
     * EVM: its nonce), for `release`. Every candidate of the payout keeps it.
     */
    reservation: string;
  } | null;
  refused: RefusedOrder[];
}

/** A payout as the worker stored it: what `broadcast`, `replace` and `release` are handed. */
export interface StoredPayout {
  id: string;
  chainId: string;
  accountId: string;
  reservation: string;
  legs: PayoutLeg[];
  /** Every candidate, oldest first; the last is the current one (the one broadcast now). */
  candidates: PayoutCandidate[];
  /** The chain's height when the current candidate was first broadcast; null before that. */
  broadcastHeight: number | null;
}

/**
 * A chain family's payout side for one configured chain. The worker calls it only while holding
 * the chain's payout role (`payouts:<chainId>`), so a rail never runs twice at once for a chain.
 */
export interface PayoutRail {
  readonly chainId: string;
  /** The most withdrawals one payout may pay (Bitcoin: a batch; EVM and Tron: 1). */
  readonly maxBatch: number;

  /** The node's best height (for replacement timing and confirmations). */
  height(signal?: AbortSignal): Promise<number>;

  /**
   * Prices what the next `build` will pay (the fee quote, a nonce read): node calls happen here,
   * outside any database transaction. Passed to `build` as `prepared`; with `payout`, for its
   * `replace` or `cancel` (Bitcoin: what the node's mempool holds of its candidates, whose
   * descendants a replacement must pay for).
   */
  prepare(signal?: AbortSignal, payout?: StoredPayout): Promise<unknown>;

  /**
   * Builds and signs one payout of `orders` (all of one account, already claimed in `em`),
   * reserving what it spends in `em` (the caller commits it together with the stored payout, or
   * rolls both back). No node calls: everything it needs from the node came through `prepare`.
   */
  build(em: EntityManager, req: { accountId: string; orders: readonly PayoutOrder[]; prepared: unknown }): Promise<RailBuild>;

  /**
   * Hands a stored candidate's bytes to the node; doing it again is harmless. Throws
   * TransactionRefused (chains/types) only when the node refused the transaction itself; any other
   * error says nothing of it.
   */
  broadcast(candidate: PayoutCandidate, signal?: AbortSignal): Promise<void>;

  /**
   * What only this payout's candidates can use, as the chain core records the wallet's spends:
   * another transaction using it in a block at the chain's confirmations proves the payout can
   * never be mined.
   */
  spendKey(candidate: PayoutCandidate): SpendKey;

  /**
   * Families whose transactions expire (Tron): whether the block at `height` (final on the chain
   * core) is past the candidate's expiration, so that a candidate in none of the blocks up to it
   * can never be mined.
   */
  expiredBy?(candidate: PayoutCandidate, height: number, signal?: AbortSignal): Promise<boolean>;

  /**
   * A replacement of the payout's current candidate with a higher fee, spending what the payout
   * reserved (BIP125 for Bitcoin, the same nonce for EVM), priced by a fresh `prepare`; null when
   * none can be made now (the fee is at the ceiling, or the change cannot pay it). No node calls;
   * the worker stores it in `em` before broadcasting it.
   */
  replace(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null>;

  /**
   * Families whose transactions expire instead of being replaced (Tron): a new candidate for a
   * payout whose current candidate can never be mined (expired for good, or refused by the node),
   * the same payment signed anew, priced by a fresh `prepare`; null when the rail will not renew it
   * (it did once): the payout then fails with its hold released. No node calls; the worker stores
   * it in `em` before broadcasting it.
   */
  renew?(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null>;

  /**
   * The network fee the mined candidate `txid` took, in native base units (Bitcoin: its stored
   * fee; EVM: gas used times effective price from the receipt). The worker asks it outside any
   * database transaction, once the chain core has confirmed the candidate, to charge the fee.
   */
  feePaid(payout: StoredPayout, txid: string, signal?: AbortSignal): Promise<bigint>;

  /**
   * Families whose mined transactions can fail (EVM status 0: reverted, its fee taken, nothing
   * paid; a token whose `Transfer` log does not show the amount reaching the payee): why the mined
   * candidate `txid` did not do what it was sent for, in the merchant's words (its withdrawals'
   * `failure_reason`), and what of the withdrawn coin left the wallet all the same (base units: a
   * token that takes a fee on transfer); null when it did. Absent: it always did.
   */
  failure?(payout: StoredPayout, txid: string, signal?: AbortSignal): Promise<{ reason: string; left: bigint } | null>;

  /**
   * Gives back what the payout reserved, once no candidate of it can be mined any more; `reason`:
   * why it failed (SPENT_BY_ANOTHER: another transaction used what it reserved).
   */
  release(em: EntityManager, payout: StoredPayout, reason?: string): Promise<void>;

  /**
   * `coinkeep payouts cancel` (PRODUCT §14): a candidate that spends what the payout spends and
   * pays it back to the wallet (Bitcoin: its coins to the account's change, BIP125; EVM: its nonce,
   * nothing to the treasury itself), at a fee that may replace the current candidate, within the
   * ceiling. Null when none can be made now. Absent (Tron): the payout's transactions expire on
   * their own; it is then failed instead of renewed. No node calls.
   */
  cancel?(em: EntityManager, payout: StoredPayout, prepared: unknown): Promise<PayoutCandidate | null>;

  /**
   * A payout failed and released, later seen mined after all: takes back what `release` gave up
   * (EVM: its nonce row), so its fee is booked as any mined payout's.
   */
  reopen?(em: EntityManager, payout: StoredPayout): Promise<void>;

  /**
   * True when the rail books what the chain takes for its transactions itself (EVM: per signed
   * send, sweeps and top-ups alike); otherwise the worker books a confirmed payout's fee from the
   * operator's `network` book to `external` (MoneyMovement.bookPayoutFee).
   */
  readonly booksOwnFees?: boolean;
}
