import os from 'node:os';
import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import { coinId } from '../catalog/coins';
import type { ChainConfig } from '../config/schema';
import type { ChainPayoutRow } from '../db/entities/payouts';
import { WithdrawalEntity, type WithdrawalRow } from '../db/entities/withdrawals';
import { inList, placeholder, rawQuery, updateRows } from '../db/raw';
import type { Store } from '../db/store';
import type { MoneyMovement } from '../money/money-movement';
import { iso, type Clock } from '../shared/clock';
import { ApiError } from '../shared/errors';
import { newTimeOrderedId } from '../shared/ids';
import type { Logger } from '../shared/logger';
import { Amount } from '../shared/money';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import type { PayoutStore } from './payout-store';
import type { PayoutCandidate, PayoutOrder, PayoutRail, StoredPayout } from './rail';

/** A payout the node never held is refused after this many checks finding it unknown... */
export const REFUSAL_CHECKS = 3;
/** ...spread over at least this long since its first broadcast (bcoin answers before its mempool holds a transaction). */
export const REFUSAL_GRACE_MS = 3000;
/** Pending withdrawals read per run. */
const CLAIM_READ = 1000;

export const REFUSED_BY_NODE = 'the node refused the transaction';
export const SPENT_BY_ANOTHER = 'the coins it spends were spent by another transaction';
export const EXPIRED_UNMINED = 'the transaction expired before it was mined (it was signed anew once, and that one expired too)';
export const REVERTED_ON_CHAIN = 'the transaction was mined but reverted (the token contract refused the transfer); its network fee is charged';

export interface PayoutSettings {
  /** An account's pending withdrawals wait this long for others to join their payout. */
  batchWindowMs: number;
  /** A payout not mined this many blocks after its broadcast is replaced with a higher fee. */
  replaceAfterBlocks: number;
}

/** Where a test may stop the daemon dead (kill -9): after a payout is stored, after its bytes went to the node. */
export type PayoutCheckpoint = 'stored' | 'sent';

export interface PayoutWorkerDeps {
  chain: ChainConfig;
  rail: PayoutRail;
  store: Store;
  payouts: PayoutStore;
  withdrawals: WithdrawalService;
  money: MoneyMovement;
  catalog: Catalog;
  settings: PayoutSettings;
  clock: Clock;
  logger: Logger;
  checkpoint?: (point: PayoutCheckpoint) => void;
}

/** Thrown inside a write to roll it back: a withdrawal changed meanwhile; the next run builds again. */
class Changed extends Error {}

/**
 * The payout worker of one chain (issue 16 §3), run once across daemons (role `payouts:<chain>`).
 * Each run first carries the stored payouts on (broadcast what the node does not hold, watch,
 * replace the stuck, fail what can no longer be mined, complete what the chain core confirmed),
 * then claims due pending withdrawals: per account, those pending within the batch window go out
 * in one payout that is built, signed and stored in the transaction that claims them, and only
 * then broadcast. A kill at any point leaves either nothing (the claim rolled back) or a stored
 * payout whose bytes the next run broadcasts again: a withdrawal is never signed for twice.
 */
export class PayoutWorker {
  readonly chainId: string;
  private readonly coinIds: string[];
  private readonly nativeCoin: string;
  private readonly claimer = `${os.hostname()}:${process.pid}`;

  constructor(private readonly deps: PayoutWorkerDeps) {
    this.chainId = deps.chain.id;
    this.coinIds = deps.catalog.coins().filter((c) => c.chain_id === this.chainId).map((c) => c.id);
    this.nativeCoin = coinId(this.chainId, 'native');
  }

  get role(): string {
    return `payouts:${this.chainId}`;
  }

  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.deps.store.roles.hold(this.role))) return;
    // The node's height is asked once a run, and only when there is a payout to carry on.
    let tip: number | undefined;
    const height = async (): Promise<number> => (tip ??= await this.deps.rail.height(signal));
    for (const row of await this.deps.payouts.open(this.deps.store.read, this.chainId)) {
      if (signal.aborted) return;
      await this.advance(row, await height(), signal);
    }
    if (!signal.aborted) await this.claim(height, signal);
  }

  private async advance(row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const payout = await this.deps.payouts.load(this.deps.store.read, row);
    if (row.status === 'confirmed') return this.complete(payout, row, signal);
    if (row.status === 'signed') return this.send(payout, row, tip, signal);
    if (row.status === 'broadcast') return this.watch(payout, row, tip, signal);
    if (row.status === 'failed') return this.alone(payout, row, tip, signal);
  }

  // ---- new payouts ----

  private async claim(height: () => Promise<number>, signal: AbortSignal): Promise<void> {
    if (this.coinIds.length === 0) return;
    const em = this.deps.store.read;
    const list = inList(em, this.coinIds, 1);
    const pending = await rawQuery<WithdrawalRow>(
      em,
      `SELECT * FROM withdrawals WHERE coin_id ${list.sql} AND status = 'pending' ORDER BY created_at, id LIMIT ${CLAIM_READ}`,
      list.params,
    );
    if (pending.length === 0) return;
    const dueBefore = this.deps.clock.now().getTime() - this.deps.settings.batchWindowMs;
    const byAccount = new Map<string, WithdrawalRow[]>();
    for (const w of pending) {
      const rows = byAccount.get(w.account_id);
      if (rows) rows.push(w);
      else if (Date.parse(w.created_at) <= dueBefore) byAccount.set(w.account_id, [w]);
    }
    if (byAccount.size === 0) return;
    const prepared = await this.deps.rail.prepare(signal);
    for (const [accountId, rows] of byAccount) {
      // A rail whose payouts pay fewer than an account's due withdrawals (EVM: one) makes several in one run.
      for (let at = 0; at < rows.length; at += this.deps.rail.maxBatch) {
        if (signal.aborted) return;
        const ids = rows.slice(at, at + this.deps.rail.maxBatch).map((w) => w.id);
        let stored: ChainPayoutRow | null;
        try {
          stored = await this.deps.store.write((em) => this.build(em, accountId, ids, prepared));
        } catch (err) {
          if (err instanceof Changed) break;
          throw err;
        }
        if (!stored) break;
        this.deps.checkpoint?.('stored');
        await this.advance(stored, await height(), signal);
      }
    }
  }

  /**
   * Claims `ids` (those still pending), builds and signs their payout and stores it, in one
   * transaction: the claim, the coins' reservation and the signed bytes commit together or not at
   * all. Orders the rail refuses fail on their own; orders it leaves out stay pending.
   */
  private async build(em: EntityManager, accountId: string, ids: string[], prepared: unknown): Promise<ChainPayoutRow | null> {
    const rows: WithdrawalRow[] = [];
    for (const id of ids) {
      const w = await em.findOneBy(WithdrawalEntity, { id });
      if (w?.status === 'pending') rows.push(w);
    }
    if (rows.length === 0) return null;
    const orders = rows.map((w) => this.orderOf(w));
    const built = await this.deps.rail.build(em, { accountId, orders, prepared });
    const byId = new Map(rows.map((w) => [w.id, w]));
    const now = iso(this.deps.clock.now());
    const claim = async (id: string, patch: Partial<WithdrawalRow>): Promise<WithdrawalRow> => {
      try {
        return await this.deps.withdrawals.payoutMove(em, byId.get(id)!, 'claim', { claimed_by: this.claimer, claimed_at: now, ...patch });
      } catch (err) {
        // The guarded move found it changed (cancelled meanwhile): the whole claim rolls back.
        if (err instanceof ApiError && err.status === 409) throw new Changed();
        throw err;
      }
    };
    for (const r of built.refused) {
      const claimed = await claim(r.withdrawalId, {});
      await this.deps.withdrawals.payoutMove(em, claimed, 'fail', { failure_reason: r.reason });
      this.deps.logger.warn('withdrawal refused by the payout rail', { chain: this.chainId, withdrawal_id: r.withdrawalId, reason: r.reason });
    }
    if (!built.payout) return null;
    const { candidate, legs, reservation } = built.payout;
    const row = this.payoutRow(accountId, reservation);
    await this.deps.payouts.insert(em, row, candidate, legs);
    for (const leg of legs) await claim(leg.withdrawalId, { candidate_txids: JSON.stringify([candidate.txid]) });
    return row;
  }

  private orderOf(w: WithdrawalRow): PayoutOrder {
    return { withdrawalId: w.id, coinId: w.coin_id, address: w.to_address, amount: Amount.of(w.amount).toBaseUnits(this.deps.catalog.coin(w.coin_id)!.decimals) };
  }

  private payoutRow(accountId: string, reservation: string): ChainPayoutRow {
    const now = this.deps.clock.now();
    return {
      id: newTimeOrderedId(now.getTime()),
      chain_id: this.chainId,
      account_id: accountId,
      coin_id: this.nativeCoin,
      status: 'signed',
      reservation,
      broadcast_height: null,
      first_broadcast_at: null,
      held: 0,
      unknown_checks: 0,
      confirmed_txid: null,
      failure_reason: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
  }

  // ---- stored payouts ----

  /** A stored payout the node has not been seen holding: (re)broadcast its bytes and look. */
  private async send(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const current = payout.candidates[payout.candidates.length - 1]!;
    if (row.first_broadcast_at === null) {
      const at = iso(this.deps.clock.now());
      await this.deps.store.write((em) => updateRows(em, 'chain_payouts', { first_broadcast_at: at, updated_at: at }, { id: row.id, status: 'signed' }));
      row = { ...row, first_broadcast_at: at };
    }
    await this.broadcast(payout, current, signal);
    this.deps.checkpoint?.('sent');
    const st = await this.deps.rail.status(current, signal);
    if (st.state === 'mempool' || st.state === 'mined') {
      await this.markBroadcast(payout, row, tip, current.txid);
    } else if (st.state === 'conflicted') {
      await (this.deps.rail.renew ? this.renew(payout, row, tip, signal) : this.fail(payout, row, SPENT_BY_ANOTHER));
    } else {
      const checks = row.unknown_checks + 1;
      const since = this.deps.clock.now().getTime() - Date.parse(row.first_broadcast_at!);
      if (checks >= REFUSAL_CHECKS && since >= REFUSAL_GRACE_MS) {
        // In a batch, each withdrawal's failure is its own: the batch gives way to one payout each.
        if (payout.legs.length > 1) await this.split(payout, row, tip, signal);
        else await this.fail(payout, row, REFUSED_BY_NODE);
      } else {
        await this.deps.store.write((em) => updateRows(em, 'chain_payouts', { unknown_checks: checks, updated_at: iso(this.deps.clock.now()) }, { id: row.id, status: 'signed', unknown_checks: row.unknown_checks }));
      }
    }
  }

  /** The node holds the payout: its withdrawals are `broadcast` with its txid. */
  private async markBroadcast(payout: StoredPayout, row: ChainPayoutRow, tip: number, txid: string): Promise<void> {
    await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      if ((await updateRows(em, 'chain_payouts', { status: 'broadcast', held: 1, unknown_checks: 0, broadcast_height: tip, updated_at: now }, { id: row.id, status: 'signed' })) !== 1) return;
      for (const leg of payout.legs) {
        const w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status !== 'processing') continue;
        await this.deps.withdrawals.payoutMove(em, w, 'broadcast', { txid, candidate_txids: txidsOf(payout) });
        await this.deps.money.trackWithdrawal(em, w.id, txid);
      }
    });
    this.deps.logger.info('payout broadcast', { chain: this.chainId, payout_id: row.id, txid, withdrawals: payout.legs.length });
  }

  /**
   * A payout the node held: mined (confirmations follow; the chain core completes it), waiting (a
   * replacement once it has waited the configured blocks), gone from the mempool (broadcast
   * again), or spent by another transaction (failed: it can never be mined now).
   */
  private async watch(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    let pooled = false;
    let conflicted = false;
    let currentConflicted = false;
    for (const [i, c] of [...payout.candidates].reverse().entries()) {
      const st = await this.deps.rail.status(c, signal);
      if (st.state === 'mined') return this.confirmations(payout, c.txid, tip - st.height + 1);
      if (st.state === 'mempool') {
        pooled = true;
        break;
      }
      if (st.state === 'conflicted') {
        conflicted = true;
        if (i === 0) currentConflicted = true;
      }
    }
    // A rail whose candidates expire (Tron): only the current one's expiry matters (an earlier one expired before it was signed).
    if (!pooled && this.deps.rail.renew) {
      if (currentConflicted) return this.renew(payout, row, tip, signal);
    } else if (!pooled && conflicted) return this.fail(payout, row, SPENT_BY_ANOTHER);
    const current = payout.candidates[payout.candidates.length - 1]!;
    if (!pooled) await this.broadcast(payout, current, signal);
    if (row.broadcast_height === null) {
      // Back from a reorganisation: the wait before a replacement starts now.
      await this.deps.store.write((em) => updateRows(em, 'chain_payouts', { broadcast_height: tip, updated_at: iso(this.deps.clock.now()) }, { id: row.id, status: 'broadcast' }));
    } else if (tip - row.broadcast_height >= this.deps.settings.replaceAfterBlocks) {
      await this.replace(payout, row, tip, signal);
    }
  }

  /** A mined candidate's depth on its withdrawals, until the chain core confirms it. */
  private async confirmations(payout: StoredPayout, txid: string, confirmations: number): Promise<void> {
    await this.deps.store.write(async (em) => {
      for (const leg of payout.legs) {
        await updateRows(em, 'withdrawals', { confirmations, txid, updated_at: iso(this.deps.clock.now()) }, { id: leg.withdrawalId, status: 'broadcast' });
        await this.deps.money.trackWithdrawal(em, leg.withdrawalId, txid);
      }
    });
  }

  /** A replacement with a higher fee from the same coins, stored before it is broadcast; every earlier candidate is kept. */
  private async replace(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const prepared = await this.deps.rail.prepare(signal);
    const next = await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      // The wait starts again whether or not a replacement can be made now.
      if ((await updateRows(em, 'chain_payouts', { broadcast_height: tip, updated_at: now }, { id: row.id, status: 'broadcast', broadcast_height: row.broadcast_height })) !== 1) return null;
      const candidate = await this.deps.rail.replace(em, payout, prepared);
      if (!candidate) return null;
      await this.deps.payouts.addCandidate(em, row, payout.candidates.length, candidate, now);
      const txids = txidsOf({ candidates: [...payout.candidates, candidate] });
      for (const leg of payout.legs) {
        await updateRows(em, 'withdrawals', { txid: candidate.txid, candidate_txids: txids, updated_at: now }, { id: leg.withdrawalId, status: 'broadcast' });
        await this.deps.money.trackWithdrawal(em, leg.withdrawalId, candidate.txid);
      }
      return candidate;
    });
    if (!next) return;
    this.deps.logger.info('payout replaced with a higher fee', { chain: this.chainId, payout_id: row.id, replaced: payout.candidates[payout.candidates.length - 1]!.txid, txid: next.txid });
    await this.broadcast(payout, next, signal);
  }

  /**
   * The current candidate can never be mined now (expired for good, so no earlier one can be
   * either): the rail's renewal, stored before it is broadcast, or, when it gives none, the payout
   * fails with its hold released.
   */
  private async renew(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const prepared = await this.deps.rail.prepare(signal);
    const next = await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      const fresh = await this.deps.payouts.row(em, row.id);
      if (fresh?.status !== row.status) return null;
      const candidate = await this.deps.rail.renew!(em, payout, prepared);
      if (!candidate) return 'fail' as const;
      if ((await updateRows(em, 'chain_payouts', { broadcast_height: row.status === 'broadcast' ? tip : null, unknown_checks: 0, updated_at: now }, { id: row.id, status: row.status })) !== 1) return null;
      await this.deps.payouts.addCandidate(em, row, payout.candidates.length, candidate, now);
      const txids = txidsOf({ candidates: [...payout.candidates, candidate] });
      for (const leg of payout.legs) {
        await updateRows(em, 'withdrawals', { txid: candidate.txid, candidate_txids: txids, updated_at: now }, { id: leg.withdrawalId, status: 'broadcast' });
        await updateRows(em, 'withdrawals', { candidate_txids: txids, updated_at: now }, { id: leg.withdrawalId, status: 'processing' });
        await this.deps.money.trackWithdrawal(em, leg.withdrawalId, candidate.txid);
      }
      return candidate;
    });
    if (next === 'fail') return this.fail(payout, row, EXPIRED_UNMINED);
    if (!next) return;
    this.deps.logger.info('payout signed anew: its transaction expired unmined', { chain: this.chainId, payout_id: row.id, expired: payout.candidates[payout.candidates.length - 1]!.txid, txid: next.txid });
    await this.broadcast(payout, next, signal);
  }

  /**
   * A batch the node refused: the node says nothing of which output it objects to, so the payout
   * gives up (it never entered a mempool, so it cannot be mined) and releases its coins, and each
   * of its withdrawals, still `processing`, goes out in a payout of its own: the bad one is refused
   * alone, the others are paid.
   */
  private async split(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const given = await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      if ((await updateRows(em, 'chain_payouts', { status: 'failed', failure_reason: `${REFUSED_BY_NODE}; its withdrawals go out one by one`, updated_at: now }, { id: row.id, status: row.status })) !== 1) return false;
      await this.deps.rail.release(em, payout, REFUSED_BY_NODE);
      return true;
    });
    this.deps.logger.warn('payout batch refused by the node: its withdrawals go out one by one', { chain: this.chainId, payout_id: row.id, withdrawals: payout.legs.length });
    if (given) await this.alone(payout, { ...row, status: 'failed' }, tip, signal);
  }

  /** Each `processing` withdrawal of a refused batch in a payout of its own (also after a restart). */
  private async alone(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const prepared = await this.deps.rail.prepare(signal);
    for (const leg of payout.legs) {
      if (signal.aborted) return;
      const stored = await this.deps.store.write(async (em): Promise<ChainPayoutRow | null> => {
        const w = await em.findOneBy(WithdrawalEntity, { id: leg.withdrawalId });
        if (w?.status !== 'processing') return null;
        const built = await this.deps.rail.build(em, { accountId: row.account_id, orders: [this.orderOf(w)], prepared });
        for (const r of built.refused) await this.deps.withdrawals.payoutMove(em, w, 'fail', { failure_reason: r.reason });
        if (!built.payout) return null;
        const single = this.payoutRow(row.account_id, built.payout.reservation);
        await this.deps.payouts.insert(em, single, built.payout.candidate, []);
        // Moved already (another run got here first): this transaction rolls back whole.
        if (!(await this.deps.payouts.moveLeg(em, w.id, row.id, single.id, built.payout.legs[0]!.output))) throw new Changed();
        await updateRows(em, 'withdrawals', { candidate_txids: JSON.stringify([built.payout.candidate.txid]), updated_at: single.created_at }, { id: w.id, status: 'processing' });
        return single;
      }).catch((err: unknown) => {
        if (err instanceof Changed) return null;
        throw err;
      });
      if (stored) await this.advance(stored, tip, signal);
    }
  }

  /** A payout that can never be mined: its withdrawals failed with `reason`, their holds and its reservation released. */
  private async fail(payout: StoredPayout, row: ChainPayoutRow, reason: string): Promise<void> {
    await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      if ((await updateRows(em, 'chain_payouts', { status: 'failed', failure_reason: reason, updated_at: now }, { id: row.id, status: row.status })) !== 1) return;
      await this.deps.rail.release(em, payout, reason);
      for (const leg of payout.legs) {
        const w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status === 'processing' || w.status === 'broadcast') await this.deps.withdrawals.payoutMove(em, w, 'fail', { failure_reason: reason });
      }
    });
    this.deps.logger.warn('payout failed', { chain: this.chainId, payout_id: row.id, reason });
  }

  /**
   * The chain core confirmed a candidate (PayoutTransfers): each withdrawal `completed`, its hold
   * settled: the amount to the chain, the platform fee to the fee book, the network fee as charged
   * (in `actual` mode its share of the fee the transaction paid, at most what was reserved).
   */
  private async complete(payout: StoredPayout, row: ChainPayoutRow, signal: AbortSignal): Promise<void> {
    const txid = row.confirmed_txid!;
    const fee = await this.deps.rail.feePaid(payout, txid, signal);
    const failure = (await this.deps.rail.failure?.(payout, txid, signal)) ?? null;
    if (failure !== null) return this.reverted(payout, row, txid, fee, failure);
    const shares = splitFee(fee, payout.legs.length);
    await this.deps.store.write(async (em) => {
      const current = await this.deps.payouts.row(em, row.id);
      if (current?.status !== 'confirmed' || current.confirmed_txid !== txid) return;
      const [depth] = await rawQuery<{ confirmations: number }>(
        em,
        `SELECT MAX(confirmations) AS confirmations FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND txid = ${placeholder(em, 2)} AND direction = 'outgoing'`,
        [this.chainId, txid],
      );
      const confirmations = Math.max(Number(depth?.confirmations ?? 0), this.deps.chain.confirmations);
      // The chain took `fee` from the wallet: out of the network book, where the withdrawals' network fees went.
      if (!this.deps.rail.booksOwnFees) {
        await this.deps.money.bookPayoutFee(em, { payoutId: row.id, coinId: this.nativeCoin, fee: Amount.fromBaseUnits(fee, this.deps.catalog.coin(this.nativeCoin)!.decimals) });
      }
      const now = iso(this.deps.clock.now());
      for (const [i, leg] of payout.legs.entries()) {
        let w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status === 'processing') w = await this.deps.withdrawals.payoutMove(em, w, 'broadcast', { txid, candidate_txids: txidsOf(payout) });
        if (w.status !== 'broadcast') continue;
        const charged = this.charged(w, shares[i]!);
        await this.deps.withdrawals.payoutMove(
          em,
          w,
          'confirm',
          { txid, confirmations, completed_at: now, network_fee_charged: charged.toString() },
          new Map([['network_fee', charged]]),
        );
        await this.deps.money.trackWithdrawal(em, w.id, txid);
      }
    });
    this.deps.logger.info('payout completed', { chain: this.chainId, payout_id: row.id, txid, withdrawals: payout.legs.length });
  }

  /**
   * A candidate mined that did not pay (EVM status 0; a token whose Transfer log falls short):
   * each withdrawal fails with `reason` and its hold is released, but the chain took the fee: each
   * is charged its network fee as on completion. What the payout reserved stays used (its nonce is spent).
   */
  private async reverted(payout: StoredPayout, row: ChainPayoutRow, txid: string, fee: bigint, reason: string): Promise<void> {
    const shares = splitFee(fee, payout.legs.length);
    await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      if ((await updateRows(em, 'chain_payouts', { status: 'failed', failure_reason: reason, updated_at: now }, { id: row.id, status: 'confirmed' })) !== 1) return;
      // The chain took `fee` all the same (Tron: a failed call's burnt TRX), out of the network book where the charges go.
      if (!this.deps.rail.booksOwnFees) {
        await this.deps.money.bookPayoutFee(em, { payoutId: row.id, coinId: this.nativeCoin, fee: Amount.fromBaseUnits(fee, this.deps.catalog.coin(this.nativeCoin)!.decimals) });
      }
      for (const [i, leg] of payout.legs.entries()) {
        let w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status !== 'processing' && w.status !== 'broadcast') continue;
        const charged = this.charged(w, shares[i]!);
        w = await this.deps.withdrawals.payoutMove(em, w, 'fail', { txid, failure_reason: reason, network_fee_charged: charged.toString() });
        await this.deps.money.chargeFailedPayout(em, w.id, charged);
      }
    });
    this.deps.logger.warn('payout mined without paying', { chain: this.chainId, payout_id: row.id, txid, reason });
  }

  /** The network fee a withdrawal is charged: its reserve, or in `actual` mode its share of the fee paid (never above the reserve). */
  private charged(w: WithdrawalRow, shareBaseUnits: bigint): Amount {
    const reserved = Amount.of(w.network_fee_reserved);
    if (w.network_fee_mode !== 'actual' || w.coin_id !== this.nativeCoin) return reserved;
    const share = Amount.fromBaseUnits(shareBaseUnits, this.deps.catalog.coin(w.coin_id)!.decimals);
    return share.cmp(reserved) < 0 ? share : reserved;
  }

  private async broadcast(payout: StoredPayout, candidate: PayoutCandidate, signal: AbortSignal): Promise<void> {
    try {
      await this.deps.rail.broadcast(candidate, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // Its status decides what follows: held, or unknown (refused, if it stays so).
      this.deps.logger.warn('payout broadcast not accepted', { chain: this.chainId, payout_id: payout.id, txid: candidate.txid, error: err instanceof Error ? err.message : String(err) });
    }
  }
}

const txidsOf = (p: Pick<StoredPayout, 'candidates'>): string => JSON.stringify(p.candidates.map((c) => c.txid));

/** `fee` split in `n` shares that add up to it, the larger ones first. */
export function splitFee(fee: bigint, n: number): bigint[] {
  const base = fee / BigInt(n);
  const rest = Number(fee % BigInt(n));
  return Array.from({ length: n }, (_, i) => base + (i < rest ? 1n : 0n));
}
