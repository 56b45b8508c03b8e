import os from 'node:os';
import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import { coinId } from '../catalog/coins';
import { TransactionRefused } from '../chains/types';
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
import { Amount } from '../shared/amount';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import { SignerUnavailable, SignRefused } from '../wallet/signer-protocol';
import { payoutEvidence, type PayoutEvidence } from './payout-evidence';
import { completionMove, confirmationsOnCompletion, leftCharged, networkFeeCharged, splitFee } from './payout-charges';
import { afterRefusal, broadcastOutcome, finalHeight, payoutFate, replacementStep } from './payout-fate';
import type { PayoutStore } from './payout-store';
import type { PayoutCandidate, PayoutOrder, PayoutRail, StoredPayout } from './rail';

/** Accounts with due withdrawals claimed per run, those waiting longest first. */
const CLAIM_ACCOUNTS = 1000;
/** Pending withdrawals of one account read per run: one account's thousands do not hold up the others. */
export const CLAIM_READ_PER_ACCOUNT = 250;

export const REFUSED_BY_NODE = 'the node refused the transaction';
export const SPENT_BY_ANOTHER = 'the coins it spends were spent by another transaction';
export const EXPIRED_UNMINED = 'the transaction expired before it was mined (it was signed anew once, and that one expired too)';
export const REVERTED_ON_CHAIN = 'the transaction was mined but reverted (the token contract refused the transfer); its network fee is charged';
export const CANCELLED_BY_OPERATOR = 'cancelled by an owner or admin: its coins were paid back to the wallet';

export interface PayoutSettings {
  /** An account's pending withdrawals wait this long for others to join their payout. */
  batchWindowMs: number;
  /** A payout not mined this many blocks after its broadcast is replaced with a higher fee. */
  replaceAfterBlocks: number;
}

/**
 * Where a test may stop the daemon dead (kill -9): after a payout is signed and before it is stored
 * (its claim rolls back), after it is stored, after its bytes went to the node.
 */
export type PayoutCheckpoint = 'signed' | 'stored' | 'sent';

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
  /** Writes a line of the account's security log in the caller's transaction. */
  securityLog: (em: EntityManager, accountId: string, action: string, details: object) => Promise<void>;
}

/** Thrown inside a write to roll it back: a withdrawal changed meanwhile; the next run builds again. */
class Changed extends Error {}

/**
 * The payout worker of one chain (issue 16 §3), run once across daemons (role `payouts:<chain>`).
 * Each run first carries the stored payouts on (reads each one's fate from the chain core's own
 * blocks, hands its current candidate to the node again, replaces the stuck, signs the cancels
 * owners asked for, fails only what is proven never to be mined, completes what the chain core
 * confirmed, reopens what failed and was mined after all: PRODUCT §14),
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
    this.coinIds = deps.catalog
      .coins()
      .filter((c) => c.chain_id === this.chainId)
      .map((c) => c.id);
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
      const at = await height();
      await this.isolated({ payout_id: row.id }, signal, () => this.advance(row, at, signal));
    }
    if (!signal.aborted) await this.claim(height, signal);
  }

  /** One payout's or claim's work: when it throws, the error is logged and the chain's other payouts and accounts go on. */
  private async isolated(subject: Record<string, string>, signal: AbortSignal, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (signal.aborted) throw err;
      // Without the signer, or refused by it, nothing was claimed or failed: the payout waits and is built again next run.
      if (err instanceof SignerUnavailable || err instanceof SignRefused) {
        this.deps.logger.warn(err instanceof SignRefused ? 'payout refused by the signer; it waits' : 'payout waits for the signer', {
          chain: this.chainId,
          ...subject,
          error: err.message,
        });
        return;
      }
      this.deps.logger.error("payout work failed; the chain's other payouts go on", {
        chain: this.chainId,
        ...subject,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  private async advance(row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const payout = await this.deps.payouts.load(this.deps.store.read, row);
    if (row.status === 'confirmed') return this.complete(payout, row, signal);
    if (row.status === 'signed' || row.status === 'broadcast') return this.carry(payout, row, tip, signal);
    if (row.status === 'failed') return this.alone(payout, row, tip, signal);
  }

  // ---- new payouts ----

  private async claim(height: () => Promise<number>, signal: AbortSignal): Promise<void> {
    if (this.coinIds.length === 0) return;
    const due = await this.dueAccounts();
    if (due.length === 0) return;
    const prepared = await this.deps.rail.prepare(signal);
    for (const { accountId, since } of due) {
      const rows = await this.pendingOf(accountId, since);
      // A rail whose payouts pay fewer than an account's due withdrawals (EVM: one) makes several in one run.
      for (let at = 0; at < rows.length; at += this.deps.rail.maxBatch) {
        if (signal.aborted) return;
        const ids = rows.slice(at, at + this.deps.rail.maxBatch).map((w) => w.id);
        let stored: ChainPayoutRow | null = null;
        let changed = false;
        await this.isolated({ account_id: accountId, withdrawal_id: ids[0]! }, signal, async () => {
          try {
            stored = await this.deps.store.write((em) => this.build(em, accountId, ids, prepared));
          } catch (err) {
            if (!(err instanceof Changed)) throw err;
            changed = true;
          }
        });
        if (changed) break;
        // None paid now (waiting, or refused): the account's later withdrawals still get their turn.
        if (!stored) continue;
        const payout: ChainPayoutRow = stored;
        this.deps.checkpoint?.('stored');
        await this.isolated({ payout_id: payout.id }, signal, async () => this.advance(payout, await height(), signal));
      }
    }
  }

  /**
   * The accounts whose oldest pending withdrawal of this chain is due (older than the batch
   * window), those waiting longest first, each with that withdrawal's creation time.
   */
  private async dueAccounts(): Promise<Array<{ accountId: string; since: string }>> {
    const em = this.deps.store.read;
    const list = inList(em, this.coinIds, 1);
    const dueBefore = iso(new Date(this.deps.clock.now().getTime() - this.deps.settings.batchWindowMs));
    // A frozen account's withdrawals wait (PRODUCT §14) without taking other accounts' places in the read.
    const rows = await rawQuery<{ account_id: string; since: string }>(
      em,
      `SELECT account_id, MIN(created_at) AS since FROM withdrawals WHERE coin_id ${list.sql} AND status = 'pending' ` +
        `AND account_id NOT IN (SELECT id FROM accounts WHERE status = 'frozen') ` +
        `GROUP BY account_id HAVING MIN(created_at) <= ${placeholder(em, list.params.length + 1)} ORDER BY since, account_id LIMIT ${CLAIM_ACCOUNTS}`,
      [...list.params, dueBefore],
    );
    return rows.map((r) => ({ accountId: r.account_id, since: r.since }));
  }

  /** An account's pending withdrawals of this chain, oldest first, from its oldest pending one on. */
  private pendingOf(accountId: string, since: string): Promise<WithdrawalRow[]> {
    const em = this.deps.store.read;
    const list = inList(em, this.coinIds, 3);
    return rawQuery<WithdrawalRow>(
      em,
      `SELECT * FROM withdrawals WHERE account_id = ${placeholder(em, 1)} AND created_at >= ${placeholder(em, 2)} AND status = 'pending' ` +
        `AND coin_id ${list.sql} ORDER BY created_at, id LIMIT ${CLAIM_READ_PER_ACCOUNT}`,
      [accountId, since, ...list.params],
    );
  }

  /**
   * Claims `ids` (those still pending, of those the account allows now), builds and signs their
   * payout and stores it, in one transaction: the claim, the coins' reservation and the signed
   * bytes commit together or not at all. Orders the rail refuses fail on their own; orders it
   * leaves out stay pending.
   */
  private async build(em: EntityManager, accountId: string, ids: string[], prepared: unknown): Promise<ChainPayoutRow | null> {
    const pending: WithdrawalRow[] = [];
    for (const id of ids) {
      const w = await em.findOneBy(WithdrawalEntity, { id });
      if (w?.status === 'pending') pending.push(w);
    }
    const rows = await unlessChanged(() => this.deps.withdrawals.claimable(em, accountId, pending));
    if (rows.length === 0) return null;
    const orders = rows.map((w) => this.orderOf(w));
    const built = await this.deps.rail.build(em, { accountId, orders, prepared });
    const byId = new Map(rows.map((w) => [w.id, w]));
    const now = iso(this.deps.clock.now());
    const claim = (id: string, patch: Partial<WithdrawalRow>): Promise<WithdrawalRow> =>
      unlessChanged(() => this.deps.withdrawals.payoutMove(em, byId.get(id)!, 'claim', { claimed_by: this.claimer, claimed_at: now, ...patch }));
    for (const r of built.refused) {
      const claimed = await claim(r.withdrawalId, {});
      await this.deps.withdrawals.payoutMove(em, claimed, 'fail', { failure_reason: r.reason });
      this.deps.logger.warn('withdrawal refused by the payout rail', { chain: this.chainId, withdrawal_id: r.withdrawalId, reason: r.reason });
    }
    if (!built.payout) return null;
    this.deps.checkpoint?.('signed');
    const { candidate, legs, reservation } = built.payout;
    const row = this.payoutRow(accountId, reservation);
    await this.deps.payouts.insert(em, row, candidate, legs);
    for (const leg of legs) await claim(leg.withdrawalId, { candidate_txids: JSON.stringify([candidate.txid]) });
    return row;
  }

  private orderOf(w: WithdrawalRow): PayoutOrder {
    const decimals = this.deps.catalog.coin(w.coin_id)!.decimals;
    return {
      withdrawalId: w.id,
      coinId: w.coin_id,
      address: w.to_address,
      amount: Amount.of(w.amount).toBaseUnits(decimals),
      networkFee: Amount.of(w.network_fee_reserved).toBaseUnits(decimals),
    };
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
      cancel_requested_at: null,
      reopened_at: null,
      confirmed_txid: null,
      failure_reason: null,
      created_at: iso(now),
      updated_at: iso(now),
    };
  }

  // ---- stored payouts ----

  /**
   * A stored payout not yet confirmed (PRODUCT §14). Its fate is read from the chain core's own
   * blocks: a candidate mined (its withdrawals `broadcast` with their depth; the core's
   * PayoutTransfers confirms it), or another transaction that took what it spends at the chain's
   * confirmations (failed), or (Tron) its expiration passed under a final block with none of its
   * candidates mined (signed anew once, else failed). Otherwise its current candidate is handed to
   * the node again: a refusal of the transaction itself fails a payout no node ever held; nothing
   * else the node answers does, however often. Waiting `replaceAfterBlocks` since its broadcast, it
   * is replaced with a higher fee.
   */
  private async carry(stored: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    let payout = stored;
    let current = payout.candidates[payout.candidates.length - 1]!;
    const cancelling = row.cancel_requested_at !== null;
    const ev = await payoutEvidence(
      this.deps.store.read,
      this.chainId,
      payout.candidates.map((c) => c.txid),
      this.deps.rail.spendKey(current),
    );
    // The node is asked about an expiration only when the blocks prove nothing else.
    const expired = ev.mined === null && ev.rival === null && (await this.expired(current, ev, signal));
    const fate = payoutFate(ev, new Set(payout.candidates.filter((c) => c.kind === 'cancel').map((c) => c.txid)), expired);
    if (fate.step === 'cancel_mined') return;
    if (fate.step === 'mined') {
      if (row.status === 'signed') await this.markBroadcast(payout, row, tip, fate.txid);
      return this.confirmations(payout, fate.txid, fate.confirmations);
    }
    if (fate.step === 'taken') return this.fail(payout, row, SPENT_BY_ANOTHER);
    if (fate.step === 'expired') return cancelling ? this.fail(payout, row, CANCELLED_BY_OPERATOR) : this.renew(payout, row, tip, signal, EXPIRED_UNMINED);
    if (cancelling && current.kind !== 'cancel' && this.deps.rail.cancel) {
      const made = await this.makeCancel(payout, row, signal);
      if (made) {
        payout = { ...payout, candidates: [...payout.candidates, made] };
        current = made;
      }
    }
    if (row.status === 'signed' && row.first_broadcast_at === null) {
      const at = iso(this.deps.clock.now());
      await this.deps.store.write((em) => updateRows(em, 'chain_payouts', { first_broadcast_at: at, updated_at: at }, { id: row.id, status: 'signed' }));
      row = { ...row, first_broadcast_at: at };
    }
    const answer = await this.broadcast(payout, current, signal);
    this.deps.checkpoint?.('sent');
    const outcome = broadcastOutcome(answer, { status: row.status as 'signed' | 'broadcast', held: row.held === 1, cancelling });
    if (outcome === 'held') {
      if (row.status === 'signed') await this.markBroadcast(payout, row, tip, current.txid);
    } else if (outcome === 'dead') {
      this.deps.logger.warn('payout refused by the node', { chain: this.chainId, payout_id: row.id, txid: current.txid, reason: answer.reason });
      const next = afterRefusal(this.deps.rail.renew !== undefined, payout.legs.length);
      if (next === 'renew') return this.renew(payout, row, tip, signal, REFUSED_BY_NODE);
      return next === 'split' ? this.split(payout, row, tip, signal) : this.fail(payout, row, REFUSED_BY_NODE);
    }
    const step = replacementStep(
      { status: row.status as 'signed' | 'broadcast', broadcastHeight: row.broadcast_height, cancelling },
      tip,
      this.deps.settings.replaceAfterBlocks,
    );
    if (step === 'restart_wait') {
      await this.deps.store.write((em) =>
        updateRows(em, 'chain_payouts', { broadcast_height: tip, updated_at: iso(this.deps.clock.now()) }, { id: row.id, status: 'broadcast' }),
      );
    } else if (step === 'replace') {
      await this.replace(payout, row, tip, signal);
    }
  }

  /** Families whose transactions expire (Tron): whether the block the chain core holds final is past the candidate's expiration. */
  private async expired(candidate: PayoutCandidate, ev: PayoutEvidence, signal: AbortSignal): Promise<boolean> {
    const final = finalHeight(ev.scanned, this.deps.chain.confirmations);
    if (!this.deps.rail.expiredBy || final === null) return false;
    return this.deps.rail.expiredBy(candidate, final, signal);
  }

  /** A node holds the payout: its withdrawals are `broadcast` with its txid. */
  private async markBroadcast(payout: StoredPayout, row: ChainPayoutRow, tip: number, txid: string): Promise<void> {
    await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      if (
        (await updateRows(em, 'chain_payouts', { status: 'broadcast', held: 1, broadcast_height: tip, updated_at: now }, { id: row.id, status: 'signed' })) !==
        1
      )
        return;
      for (const leg of payout.legs) {
        const w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status !== 'processing') continue;
        await this.deps.withdrawals.payoutMove(em, w, 'broadcast', { txid, candidate_txids: txidsOf(payout) });
        await this.deps.money.trackWithdrawal(em, w.id, txid);
      }
    });
    this.deps.logger.info('payout broadcast', { chain: this.chainId, payout_id: row.id, txid, withdrawals: payout.legs.length });
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
    const prepared = await this.deps.rail.prepare(signal, payout);
    const next = await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      // The wait starts again whether or not a replacement can be made now.
      if (
        (await updateRows(
          em,
          'chain_payouts',
          { broadcast_height: tip, updated_at: now },
          { id: row.id, status: 'broadcast', broadcast_height: row.broadcast_height },
        )) !== 1
      )
        return null;
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
    this.deps.logger.info('payout replaced with a higher fee', {
      chain: this.chainId,
      payout_id: row.id,
      replaced: payout.candidates[payout.candidates.length - 1]!.txid,
      txid: next.txid,
    });
    await this.broadcast(payout, next, signal);
  }

  /**
   * `coinkeep payouts cancel`: the rail's cancel (the payout's coins or nonce back to the wallet),
   * stored before it is broadcast as the payout's current candidate; null when none can be made now
   * (asked again next run).
   */
  private async makeCancel(payout: StoredPayout, row: ChainPayoutRow, signal: AbortSignal): Promise<PayoutCandidate | null> {
    const prepared = await this.deps.rail.prepare(signal, payout);
    const made = await this.deps.store.write(async (em) => {
      const fresh = await this.deps.payouts.row(em, row.id);
      if (fresh?.status !== row.status) return null;
      const candidate = await this.deps.rail.cancel!(em, payout, prepared);
      if (!candidate) return null;
      await this.deps.payouts.addCandidate(em, row, payout.candidates.length, { ...candidate, kind: 'cancel' }, iso(this.deps.clock.now()));
      return { ...candidate, kind: 'cancel' as const };
    });
    if (made)
      this.deps.logger.warn('payout cancel signed: its coins go back to the wallet', {
        chain: this.chainId,
        payout_id: row.id,
        cancels: payout.candidates[payout.candidates.length - 1]!.txid,
        txid: made.txid,
      });
    else this.deps.logger.warn('payout cancel cannot be made now', { chain: this.chainId, payout_id: row.id });
    return made;
  }

  /**
   * The current candidate can never be mined (expired for good, or refused before any node held
   * it), so no earlier one can be either: the rail's renewal, stored before it is broadcast, or,
   * when it gives none, the payout fails with `reason` and its hold released.
   */
  private async renew(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal, reason: string): Promise<void> {
    const prepared = await this.deps.rail.prepare(signal);
    const next = await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      const fresh = await this.deps.payouts.row(em, row.id);
      if (fresh?.status !== row.status) return null;
      const candidate = await this.deps.rail.renew!(em, payout, prepared);
      if (!candidate) return 'fail' as const;
      if (
        (await updateRows(
          em,
          'chain_payouts',
          { broadcast_height: row.status === 'broadcast' ? tip : null, updated_at: now },
          { id: row.id, status: row.status },
        )) !== 1
      )
        return null;
      await this.deps.payouts.addCandidate(em, row, payout.candidates.length, candidate, now);
      const txids = txidsOf({ candidates: [...payout.candidates, candidate] });
      for (const leg of payout.legs) {
        await updateRows(em, 'withdrawals', { txid: candidate.txid, candidate_txids: txids, updated_at: now }, { id: leg.withdrawalId, status: 'broadcast' });
        await updateRows(em, 'withdrawals', { candidate_txids: txids, updated_at: now }, { id: leg.withdrawalId, status: 'processing' });
        await this.deps.money.trackWithdrawal(em, leg.withdrawalId, candidate.txid);
      }
      return candidate;
    });
    if (next === 'fail') return this.fail(payout, row, reason);
    if (!next) return;
    this.deps.logger.info('payout signed anew: its transaction can never be mined', {
      chain: this.chainId,
      payout_id: row.id,
      dead: payout.candidates[payout.candidates.length - 1]!.txid,
      txid: next.txid,
    });
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
      if (
        (await updateRows(
          em,
          'chain_payouts',
          { status: 'failed', failure_reason: `${REFUSED_BY_NODE}; its withdrawals go out one by one`, updated_at: now },
          { id: row.id, status: row.status },
        )) !== 1
      )
        return false;
      await this.deps.rail.release(em, payout, REFUSED_BY_NODE);
      return true;
    });
    this.deps.logger.warn('payout batch refused by the node: its withdrawals go out one by one', {
      chain: this.chainId,
      payout_id: row.id,
      withdrawals: payout.legs.length,
    });
    if (given) await this.alone(payout, { ...row, status: 'failed' }, tip, signal);
  }

  /** Each `processing` withdrawal of a refused batch in a payout of its own (also after a restart). */
  private async alone(payout: StoredPayout, row: ChainPayoutRow, tip: number, signal: AbortSignal): Promise<void> {
    const prepared = await this.deps.rail.prepare(signal);
    for (const leg of payout.legs) {
      if (signal.aborted) return;
      const stored = await this.deps.store
        .write(async (em): Promise<ChainPayoutRow | null> => {
          const w = await em.findOneBy(WithdrawalEntity, { id: leg.withdrawalId });
          if (w?.status !== 'processing') return null;
          const built = await this.deps.rail.build(em, { accountId: row.account_id, orders: [this.orderOf(w)], prepared });
          for (const r of built.refused) await this.deps.withdrawals.payoutMove(em, w, 'fail', { failure_reason: r.reason });
          if (!built.payout) return null;
          const single = this.payoutRow(row.account_id, built.payout.reservation);
          await this.deps.payouts.insert(em, single, built.payout.candidate, []);
          // Moved already (another run got here first): this transaction rolls back whole.
          if (!(await this.deps.payouts.moveLeg(em, w.id, row.id, single.id, built.payout.legs[0]!.output))) throw new Changed();
          await updateRows(
            em,
            'withdrawals',
            { candidate_txids: JSON.stringify([built.payout.candidate.txid]), updated_at: single.created_at },
            { id: w.id, status: 'processing' },
          );
          return single;
        })
        .catch((err: unknown) => {
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
      if ((await updateRows(em, 'chain_payouts', { status: 'failed', failure_reason: reason, updated_at: now }, { id: row.id, status: row.status })) !== 1)
        return;
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
   * (in `actual` mode its share of the fee the transaction paid, at most what was reserved). A
   * payout failed before and mined after all (reopened) completes its failed withdrawals too, their
   * `total_debit` charged again (PRODUCT §14). A confirmed cancel, or a candidate mined and reverted,
   * pays nothing (`unpaid`).
   */
  private async complete(payout: StoredPayout, row: ChainPayoutRow, signal: AbortSignal): Promise<void> {
    const txid = row.confirmed_txid!;
    const fee = await this.deps.rail.feePaid(payout, txid, signal);
    if (payout.candidates.find((c) => c.txid === txid)?.kind === 'cancel') return this.unpaid(payout, row, txid, fee, CANCELLED_BY_OPERATOR);
    const failure = (await this.deps.rail.failure?.(payout, txid, signal)) ?? null;
    if (failure !== null) return this.unpaid(payout, row, txid, fee, failure.reason, failure.left);
    const shares = splitFee(fee, payout.legs.length);
    const reopened: string[] = [];
    await this.deps.store.write(async (em) => {
      const current = await this.deps.payouts.row(em, row.id);
      if (current?.status !== 'confirmed' || current.confirmed_txid !== txid) return;
      const [depth] = await rawQuery<{ confirmations: number }>(
        em,
        `SELECT MAX(confirmations) AS confirmations FROM chain_transfers WHERE chain_id = ${placeholder(em, 1)} AND txid = ${placeholder(em, 2)} AND direction = 'outgoing'`,
        [this.chainId, txid],
      );
      const confirmations = confirmationsOnCompletion(Number(depth?.confirmations ?? 0), this.deps.chain.confirmations);
      // The chain took `fee` from the wallet: out of the network book, where the withdrawals' network fees went.
      if (!this.deps.rail.booksOwnFees) {
        await this.deps.money.bookPayoutFee(em, {
          payoutId: row.id,
          coinId: this.nativeCoin,
          fee: Amount.fromBaseUnits(fee, this.deps.catalog.coin(this.nativeCoin)!.decimals),
        });
      }
      const now = iso(this.deps.clock.now());
      for (const [i, leg] of payout.legs.entries()) {
        let w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status === 'processing') w = await this.deps.withdrawals.payoutMove(em, w, 'broadcast', { txid, candidate_txids: txidsOf(payout) });
        const move = completionMove(w.status, current.reopened_at !== null);
        if (move === null) continue;
        const again = move === 'reopen';
        if (again && reopened.length === 0) await this.deps.rail.reopen?.(em, payout);
        const charged = this.charged(w, shares[i]!);
        await this.deps.withdrawals.payoutMove(
          em,
          w,
          move,
          { txid, confirmations, completed_at: now, network_fee_charged: charged.toString(), ...(again ? { failure_reason: null } : {}) },
          new Map([['network_fee', charged]]),
        );
        await this.deps.money.trackWithdrawal(em, w.id, txid);
        if (again) {
          reopened.push(w.id);
          await this.deps.securityLog(em, w.account_id, 'payout_reopened', { payout_id: row.id, withdrawal_id: w.id, txid, total_debit: w.total_debit });
        }
      }
    });
    if (reopened.length > 0)
      this.deps.logger.error('a failed payout was mined after all: its withdrawals are completed and charged again', {
        chain: this.chainId,
        payout_id: row.id,
        txid,
        withdrawals: reopened,
      });
    else this.deps.logger.info('payout completed', { chain: this.chainId, payout_id: row.id, txid, withdrawals: payout.legs.length });
  }

  /**
   * A confirmed candidate that did not pay: mined and reverted (EVM status 0), a token whose
   * Transfer log falls short, or the cancel that paid the coins back to the wallet. Each withdrawal
   * fails with `reason` and its hold is released, but the chain took the fee: each is charged its
   * network fee as on completion, and what of the withdrawn coin left the wallet all the same
   * (`left`: a token taking a fee on transfer). What the payout reserved stays used (its coins or
   * its nonce are spent).
   */
  private async unpaid(payout: StoredPayout, row: ChainPayoutRow, txid: string, fee: bigint, reason: string, left = 0n): Promise<void> {
    const shares = splitFee(fee, payout.legs.length);
    await this.deps.store.write(async (em) => {
      const now = iso(this.deps.clock.now());
      if ((await updateRows(em, 'chain_payouts', { status: 'failed', failure_reason: reason, updated_at: now }, { id: row.id, status: 'confirmed' })) !== 1)
        return;
      // The chain took `fee` all the same (Tron: a failed call's burnt TRX), out of the network book where the charges go.
      if (!this.deps.rail.booksOwnFees) {
        await this.deps.money.bookPayoutFee(em, {
          payoutId: row.id,
          coinId: this.nativeCoin,
          fee: Amount.fromBaseUnits(fee, this.deps.catalog.coin(this.nativeCoin)!.decimals),
        });
      }
      for (const [i, leg] of payout.legs.entries()) {
        let w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status !== 'processing' && w.status !== 'broadcast') continue;
        const charged = this.charged(w, shares[i]!);
        w = await this.deps.withdrawals.payoutMove(em, w, 'fail', { txid, failure_reason: reason, network_fee_charged: charged.toString() });
        // A payout of one withdrawal (account families): what left the wallet without reaching the payee is charged too, so the books keep what the chain holds.
        const gone = leftCharged(payout.legs.length, left, this.deps.catalog.coin(w.coin_id)!.decimals);
        await this.deps.money.chargeFailedPayout(em, w.id, charged, gone);
      }
    });
    this.deps.logger.warn('payout confirmed without paying', { chain: this.chainId, payout_id: row.id, txid, reason });
  }

  /** The network fee a withdrawal is charged: its reserve, or in `actual` mode its share of the fee paid (never above the reserve). */
  private charged(w: WithdrawalRow, shareBaseUnits: bigint): Amount {
    return networkFeeCharged(w, shareBaseUnits, { coinId: this.nativeCoin, decimals: this.deps.catalog.coin(this.nativeCoin)!.decimals });
  }

  /** Hands a candidate to the node: sent (the node holds it), refused for what it is, or neither (the node's trouble, or nothing sure). */
  private async broadcast(payout: StoredPayout, candidate: PayoutCandidate, signal: AbortSignal): Promise<{ sent: boolean; refused: boolean; reason: string }> {
    try {
      await this.deps.rail.broadcast(candidate, signal);
      return { sent: true, refused: false, reason: '' };
    } catch (err) {
      if (signal.aborted) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      this.deps.logger.warn('payout broadcast not accepted', { chain: this.chainId, payout_id: payout.id, txid: candidate.txid, error: reason });
      return { sent: false, refused: err instanceof TransactionRefused, reason };
    }
  }
}

/** A guarded move that found its withdrawal changed meanwhile (cancelled, say) rolls the whole claim back. */
async function unlessChanged<T>(move: () => Promise<T>): Promise<T> {
  try {
    return await move();
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) throw new Changed();
    throw err;
  }
}

const txidsOf = (p: Pick<StoredPayout, 'candidates'>): string => JSON.stringify(p.candidates.map((c) => c.txid));
