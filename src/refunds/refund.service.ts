import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import { networkLabel, type NamedChain } from '../catalog/networks';
import type { InvoiceRow, TransactionRow } from '../db/entities/money';
import { RefundEntity, type RefundRow, type RefundStatus } from '../db/entities/refund';
import type { WithdrawalRow } from '../db/entities/withdrawals';
import { applyKeyset, countUpTo, keysetBatches, type PageKey } from '../db/keyset';
import { insertRowIfAbsent, isUniqueViolation, lockRow, placeholder, rawQuery, updateRows } from '../db/raw';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import { Amount } from '../shared/amount';
import { iso, type Clock } from '../shared/clock';
import { ApiError, conflict, notFound, validationError } from '../shared/errors';
import type { EventType } from '../shared/events';
import { newTimeOrderedId } from '../shared/ids';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import { checkShape } from '../shared/schema';
import type { StrayService } from '../strays/stray.service';
import { ROLES, type Actor, type TeamService } from '../team/team.service';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import { CreateRefundBody, parseRefundAmount, parseRefundRequest, StrayRefundBody, type RefundFilters, type RefundRequest } from './refund.request';
import type { RefundPageSource, RefundPageView } from './refund-page.source';
import { countsAsRefunded, refundEvent } from './refund.state';
import { presentRefund, type RefundDecision, type RefundDecisionKind, type RefundView } from './refund.view';

export interface RefundServiceDeps {
  store: Store;
  catalog: Catalog;
  withdrawals: WithdrawalService;
  /** The members' side (the CLI and the dashboard): who may read and cancel, and the security log. */
  team: TeamService;
  /** Stray payments: one refunded is credited as a deposit first (PRODUCT §17). */
  strays: Pick<StrayService, 'refundable' | 'creditForRefund'>;
  outbox: Outbox;
  sealer: Sealer;
  clock: Clock;
  /** The public base URL the payer link starts with. */
  baseUrl: string;
  /** `refunds.link_ttl_hours`: how long an unused payer link stays open. */
  linkTtlHours: number;
  /** The configured chains, for the network names the payer page shows. */
  chains: readonly NamedChain[];
}

/** Who asks for a refund: the signed request's key (the withdrawal is created on its behalf). */
export interface RefundCaller {
  accountId: string;
  apiKeyId: string;
  limits: { key: string; ip: string };
}

/** What a refund is taken from: the invoice, the incoming transaction, or both (a payment of that invoice). */
interface Source {
  coinId: string;
  invoice: InvoiceRow | null;
  tx: TransactionRow | null;
}

/** Token bytes of a payer link: 256 random bits, base64url. */
const TOKEN_BYTES = 32;
const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
/** A token's shape as a path segment: anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22,64}$/;
/** A concurrent request won a unique index first: the write runs again and finds what it wrote. */
class Raced extends Error {}
const EXPIRY_BATCH = 200;
/** What a member's list and the dashboard's lists show at most. */
const MEMBER_LIST = 200;
const DECISIONS = 50;
/** The statuses of a refund in flight or waiting for its address (the dashboard's). */
const OPEN: readonly RefundStatus[] = ['awaiting_address', 'pending', 'review', 'awaiting_approval', 'processing', 'broadcast'];

/**
 * Refunds (PRODUCT §16): money sent back against an invoice or an incoming transaction, never more
 * than was received less earlier refunds. A refund is a withdrawal underneath, created through the
 * withdrawal service (its checks, hold, review, dual approval, payout worker and events) once its
 * address is known; until then it waits in `awaiting_address` with a hold of its own and a payer
 * link. Its status follows its withdrawal's (`onWithdrawalMove`, in the move's transaction). The
 * invoice's and transaction's `refunded_amount` is the exact sum of their live refunds, changed in
 * the transaction that changes a refund's status.
 */
export class RefundService {
  /** The payer page's side of the service (the checkout routes call it). */
  readonly pages: RefundPageSource = {
    view: (pathId, token) => this.pageView(pathId, token),
    check: (pathId, token, address) => this.checkAddress(pathId, token, address),
    provide: (pathId, token, address) => this.provideAddress(pathId, token, address),
  };

  constructor(private readonly deps: RefundServiceDeps) {
    deps.withdrawals.followRefunds((em, w) => this.onWithdrawalMove(em, w));
  }

  /**
   * POST /v1/refunds after the payout permission held. `created` is false when the refund_id named
   * an existing refund with the same values (answered 200).
   */
  async create(caller: RefundCaller, body: Record<string, unknown>): Promise<{ refund: RefundView; created: boolean }> {
    const req = parseRefundRequest(checkShape(CreateRefundBody, body, 'a refund request'));
    const repeat = await this.verifiedRepeat(caller, req);
    if (repeat) return repeat;
    const source = await this.sourceOf(this.deps.store.read, caller.accountId, req);
    return this.write(caller, req, source, (em) => this.sourceOf(em, caller.accountId, req, true));
  }

  /**
   * POST /v1/strays/{id}/refund (PRODUCT §17): the whole stray payment sent back, as a refund of the
   * deposit it is credited as (without a platform fee) in the refund's creating transaction.
   */
  async refundStray(caller: RefundCaller, strayId: string, body: Record<string, unknown>): Promise<{ refund: RefundView; created: boolean }> {
    const req = parseRefundRequest({ ...checkShape(StrayRefundBody, body, 'a stray refund request'), amount: 'all' }, true);
    const repeat = await this.verifiedRepeat(caller, req);
    if (repeat) return repeat;
    const stray = await this.deps.strays.refundable(caller.accountId, strayId);
    // Before the write: the stray as the deposit it will be, to price the refund.
    const before: Source = { coinId: stray.coin_id, invoice: null, tx: { amount: stray.amount, status: 'confirmed', refunded_amount: '0' } as TransactionRow };
    return this.write(caller, req, before, async (em) => {
      const { deposit } = await this.deps.strays.creditForRefund(em, caller.accountId, strayId);
      return { coinId: deposit.coin_id, invoice: null, tx: deposit };
    });
  }

  /** A creation's first checks: the account verified (403 `kyb_required`), then the refund its refund_id names, if any. */
  private async verifiedRepeat(caller: RefundCaller, req: RefundRequest): Promise<{ refund: RefundView; created: false } | null> {
    await this.deps.withdrawals.assertVerified(caller.accountId);
    const repeat = await this.findRepeat(this.deps.store.read, caller.accountId, req);
    return repeat ? { refund: this.present(repeat), created: false } : null;
  }

  /**
   * A refund's creation: priced before the write (the fee quote may ask the node), then in one
   * transaction the source read again (`sourceIn`, its rows locked), the amount checked again, the
   * refund written with what it takes from the source, and either its withdrawal (an address was
   * given) or its own hold and payer link.
   */
  private async write(
    caller: RefundCaller,
    req: RefundRequest,
    source: Source,
    sourceIn: (em: EntityManager) => Promise<Source>,
  ): Promise<{ refund: RefundView; created: boolean }> {
    const payout = this.deps.withdrawals.payoutCoin(source.coinId);
    const wanted = this.resolveAmount(req.amount, source, payout.coin.decimals);
    let to = req.toAddress;
    if (to !== null) to = payout.sender.canonicalAddress?.(to) ?? to;
    const price = await this.deps.withdrawals.priceRefund({
      accountId: caller.accountId,
      coinId: source.coinId,
      refund: wanted,
      to,
      feePaidBy: req.feePaidBy,
      requireVerified: true,
    });
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deps.store.write(async (em) => {
          const found = await this.findRepeat(em, caller.accountId, req);
          if (found) return { refund: this.present(found), created: false };
          const fresh = await sourceIn(em);
          // Parallel refunds of one payment take turns here: the second finds the first's amount.
          const amount = this.resolveAmount(req.amount, fresh, payout.coin.decimals);
          if (!amount.eq(wanted)) throw conflict('the refundable amount changed meanwhile; try again', { reason: 'refund_exceeds_received' });
          const now = this.deps.clock.now();
          const token = to === null ? randomBytes(TOKEN_BYTES).toString('base64url') : null;
          const row: RefundRow = {
            id: newTimeOrderedId(now.getTime()),
            account_id: caller.accountId,
            status: 'awaiting_address',
            refund_id: req.refundId,
            invoice_id: fresh.invoice?.id ?? null,
            transaction_id: fresh.tx?.id ?? null,
            coin_id: source.coinId,
            amount: amount.toString(),
            to_address: to,
            token_hash: token === null ? null : hashToken(token),
            token_sealed: null,
            network_fee_paid_by: req.feePaidBy,
            comment: req.comment,
            withdrawal_id: null,
            txid: null,
            hold_id: null,
            api_key_id: caller.apiKeyId,
            failure_reason: null,
            expires_at: to === null ? iso(new Date(now.getTime() + this.deps.linkTtlHours * 3600_000)) : null,
            created_at: iso(now),
            updated_at: iso(now),
          };
          if (token !== null) row.token_sealed = this.deps.sealer.seal(token, { table: 'refunds', column: 'token_sealed', row: row.id });
          if (!(await insertRowIfAbsent(em, 'refunds', row))) throw new Raced();
          await this.addRefunded(em, row, amount);
          let stored = row;
          if (to === null) {
            const holdId = await this.deps.withdrawals.holdForRefund(em, {
              accountId: row.account_id,
              coinId: row.coin_id,
              refundId: row.id,
              send: price.send,
              fees: price.fees,
            });
            await updateRows(em, 'refunds', { hold_id: holdId }, { id: row.id });
            stored = { ...row, hold_id: holdId };
          } else {
            stored = await this.startWithdrawal(em, row, { ...price, to }, caller.limits);
          }
          await this.emit(em, 'refund.created', stored);
          return { refund: this.present(stored), created: true };
        });
      } catch (err) {
        if ((err instanceof Raced || isUniqueViolation(err)) && attempt < 5) continue;
        throw err;
      }
    }
  }

  async get(accountId: string, id: string): Promise<RefundView> {
    return this.present(await this.find(this.deps.store.read, accountId, id));
  }

  async page(accountId: string, f: RefundFilters, page: PageRequest): Promise<Page<RefundView>> {
    const rows = await applyKeyset(this.query(accountId, f), 'r', page).getMany();
    return toPage(rows, page, (r) => this.present(r));
  }

  batches(accountId: string, f: RefundFilters, after: PageKey | null, size: number): AsyncIterable<RefundRow[]> {
    return keysetBatches(() => this.query(accountId, f), 'r', {
      after,
      batchSize: size,
      read: (qb) => qb.getMany() as Promise<RefundRow[]>,
      keyOf: (r) => r,
    });
  }

  count(accountId: string, f: RefundFilters, after: PageKey | null, cap: number): Promise<number> {
    const qb = this.query(accountId, f);
    if (after) applyKeyset(qb, 'r', { limit: cap, after });
    return countUpTo(qb, cap);
  }

  /** The merchant's refunds in flight and waiting for an address (the dashboard's), newest first. */
  async open(accountId: string, limit = DECISIONS): Promise<RefundView[]> {
    const rows = await this.query(accountId, {}).andWhere('r.status IN (:...open)', { open: OPEN }).limit(limit).getMany();
    return rows.map((r) => this.present(r));
  }

  /**
   * The account's invoices that need the merchant's decision (PRODUCT §16, the dashboard): overpaid
   * with some of the excess not refunded, underpaid past the TTL and not accepted, and paid late;
   * each once (in that order of kinds) with what a refund could still take, newest first, at most
   * 50. Each kind is one query on the account's invoices, newest first, LIMIT 50; amounts are
   * compared exactly here (they are decimal strings), so an invoice whose refunds took all a kind
   * allows drops out of it.
   */
  async decisions(accountId: string, limit = DECISIONS): Promise<RefundDecision[]> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    const cols = 'id, account_id, status, coin_id, paid_amount, overpaid_amount, refunded_amount, late_payment, resolution, ttl_expires_at, created_at';
    const newest = `ORDER BY created_at DESC, id DESC LIMIT ${Math.max(1, Math.min(limit, DECISIONS))}`;
    // A zero amount is stored as '0' (Amount's normal form): the string compares cut what cannot be due.
    const kinds: Array<{ kind: RefundDecisionKind; where: string; params: unknown[] }> = [
      { kind: 'overpaid', where: `overpaid_amount <> '0' AND overpaid_amount <> refunded_amount`, params: [] },
      {
        kind: 'underpaid',
        where: `status = 'underpaid' AND resolution IS NULL AND ttl_expires_at < ${p(2)} AND paid_amount <> refunded_amount`,
        params: [iso(this.deps.clock.now())],
      },
      { kind: 'late', where: `late_payment AND paid_amount <> refunded_amount`, params: [] },
    ];
    const seen = new Map<string, RefundDecision>();
    for (const k of kinds) {
      const rows = await rawQuery<InvoiceRow>(em, `SELECT ${cols} FROM invoices WHERE account_id = ${p(1)} AND ${k.where} ${newest}`, [accountId, ...k.params]);
      for (const r of rows) {
        if (seen.has(r.id) || r.coin_id === null) continue;
        const source: Source = { coinId: r.coin_id, invoice: r, tx: null };
        const refundable = k.kind === 'overpaid' ? this.excess(source.invoice!, this.refundable(source)) : this.refundable(source);
        if (!refundable.isPositive()) continue;
        seen.set(r.id, {
          kind: k.kind,
          invoice_id: r.id,
          account_id: r.account_id,
          status: r.status,
          coin_id: r.coin_id,
          ticker: this.deps.catalog.coin(r.coin_id)?.ticker ?? null,
          paid_amount: r.paid_amount,
          overpaid_amount: r.overpaid_amount,
          refunded_amount: r.refunded_amount,
          refundable: refundable.toString(),
          created_at: r.created_at,
        });
      }
    }
    return [...seen.values()]
      .sort((a, b) => (a.created_at === b.created_at ? b.invoice_id.localeCompare(a.invoice_id) : b.created_at.localeCompare(a.created_at)))
      .slice(0, limit);
  }

  /** An account's refunds for a member (`coinkeep refunds list`), newest first, at most 200; `status` filters. */
  async listForMember(accountId: string, actor: Actor, status?: RefundStatus): Promise<RefundView[]> {
    await this.deps.team.authorize(this.deps.store.read, accountId, actor, { roles: ROLES, otp: false });
    const rows = await this.query(accountId, status ? { status } : {})
      .limit(MEMBER_LIST)
      .getMany();
    return rows.map((r) => this.present(r));
  }

  async getForMember(accountId: string, actor: Actor, id: string): Promise<RefundView> {
    await this.deps.team.authorize(this.deps.store.read, accountId, actor, { roles: ROLES, otp: false });
    return this.get(accountId, id);
  }

  /**
   * A member's cancel (`coinkeep refunds cancel`, the dashboard): any role, with their two-factor
   * code, as the API's cancel (before processing), written to the security log.
   */
  async cancelForMember(accountId: string, id: string, actor: Actor): Promise<RefundView> {
    return this.deps.store.write(async (em) => {
      const who = await this.deps.team.authorize(em, accountId, actor, { roles: ROLES, otp: true });
      const row = await this.find(em, accountId, id);
      const view = await this.cancelIn(em, row);
      await this.deps.team.log(em, accountId, who, 'refund.cancelled', {
        refund_id: row.id,
        from: row.status,
        amount: row.amount,
        coin_id: row.coin_id,
        invoice_id: row.invoice_id,
        transaction_id: row.transaction_id,
      });
      return view;
    });
  }

  present = (r: RefundRow): RefundView => presentRefund(this.deps.catalog, r, this.refundUrl(r));

  /**
   * POST /v1/refunds/{id}/cancel: one waiting for its address is cancelled and its hold released;
   * one with a withdrawal is cancelled with it, only before processing (409 after).
   */
  async cancel(accountId: string, id: string): Promise<RefundView> {
    return this.deps.store.write(async (em) => this.cancelIn(em, await this.find(em, accountId, id)));
  }

  private async cancelIn(em: EntityManager, row: RefundRow): Promise<RefundView> {
    if (row.withdrawal_id !== null) {
      await this.deps.withdrawals.cancelWithin(em, row.account_id, row.withdrawal_id);
      return this.present(await this.find(em, row.account_id, row.id));
    }
    if (row.status !== 'awaiting_address') throw conflict(`a refund in ${row.status} cannot be cancelled`, { status: row.status });
    return this.present(await this.end(em, row, 'cancelled'));
  }

  /** Refunds whose payer link went unused past `expires_at`: expired, holds released. How many. */
  async expireDue(signal?: AbortSignal): Promise<number> {
    let done = 0;
    for (;;) {
      if (signal?.aborted) return done;
      const now = iso(this.deps.clock.now());
      const due = await this.deps.store.read
        .createQueryBuilder(RefundEntity, 'r')
        .where("r.status = 'awaiting_address' AND r.expires_at < :now", { now })
        .orderBy('r.expires_at', 'ASC')
        .limit(EXPIRY_BATCH)
        .getMany();
      for (const row of due) {
        const moved = await this.deps.store.write(async (em) => {
          const [fresh] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE id = ${placeholder(em, 1)}`, [row.id]);
          if (!fresh || fresh.status !== 'awaiting_address') return false;
          await this.end(em, fresh, 'expired');
          return true;
        });
        if (moved) done++;
      }
      if (due.length < EXPIRY_BATCH) return done;
    }
  }

  // ---- The payer's page (PRODUCT §16): found by its link's token, never by the refund's id. ----

  async pageView(pathId: string, token: string): Promise<RefundPageView | null> {
    const row = await this.byToken(this.deps.store.read, pathId, token);
    return row ? this.pageOf(row, await this.merchantName(row.account_id)) : null;
  }

  /** The address a payer entered, checked as for a withdrawal and shown back with its network before it is final. */
  async checkAddress(pathId: string, token: string, address: unknown): Promise<{ to_address: string; network: string; network_name: string }> {
    const row = await this.byToken(this.deps.store.read, pathId, token);
    if (!row) throw notFound('refund');
    const to = this.payerAddress(row, address);
    const page = this.pageOf(row);
    return { to_address: to, network: page.network, network_name: page.network_name };
  }

  /**
   * The payer's address: the refund's hold released and its withdrawal created with the address,
   * in one transaction; once. A link past its time expires here as the job would expire it.
   */
  async provideAddress(pathId: string, token: string, address: unknown): Promise<RefundPageView> {
    const row = await this.byToken(this.deps.store.read, pathId, token);
    if (!row) throw notFound('refund');
    if (row.status !== 'awaiting_address') throw notAwaiting(row.status);
    if (row.expires_at !== null && row.expires_at < iso(this.deps.clock.now())) {
      // Past its time: this refund expires now, as the job would expire it (no other work for a public caller).
      await this.deps.store.write(async (em) => {
        const [fresh] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE id = ${placeholder(em, 1)}`, [row.id]);
        if (fresh?.status === 'awaiting_address') await this.end(em, fresh, 'expired');
      });
      throw notAwaiting('expired');
    }
    const to = this.payerAddress(row, address);
    const price = await this.deps.withdrawals.priceRefund({
      accountId: row.account_id,
      coinId: row.coin_id,
      refund: Amount.of(row.amount),
      to,
      feePaidBy: row.network_fee_paid_by,
      requireVerified: false,
    });
    return this.deps.store.write(async (em) => {
      const [fresh] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE id = ${placeholder(em, 1)}`, [row.id]);
      if (!fresh || fresh.status !== 'awaiting_address') throw notAwaiting(fresh?.status ?? 'cancelled');
      if (fresh.hold_id !== null) await this.deps.withdrawals.releaseRefundHold(em, fresh.hold_id);
      const started = await this.startWithdrawal(em, { ...fresh, to_address: to, hold_id: null }, { ...price, to }, null);
      await this.emit(em, 'refund.address_provided', started);
      return this.pageOf(started, await this.merchantName(started.account_id));
    });
  }

  /**
   * A refund's withdrawal moved (the withdrawal service's transaction): the refund takes its status,
   * txid and failure; one that ended gives its amount back to what may be refunded, one that came
   * back (a failed payout mined after all) takes it again; its event when PRODUCT §16 names one.
   */
  async onWithdrawalMove(em: EntityManager, w: WithdrawalRow): Promise<void> {
    if (!w.refund_id) return;
    const [row] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE id = ${placeholder(em, 1)}`, [w.refund_id]);
    if (!row || row.status === w.status) return;
    const now = iso(this.deps.clock.now());
    const patch = { status: w.status as RefundStatus, txid: w.txid, failure_reason: w.failure_reason, updated_at: now };
    if ((await updateRows(em, 'refunds', patch, { id: row.id, status: row.status })) !== 1) throw new Error(`refund ${row.id} changed under its withdrawal`);
    const was = countsAsRefunded(row.status);
    const is = countsAsRefunded(patch.status);
    if (was && !is) await this.addRefunded(em, row, Amount.zero().minus(Amount.of(row.amount)));
    if (!was && is) await this.addRefunded(em, row, Amount.of(row.amount));
    const event = refundEvent(row.status, patch.status);
    if (event) await this.emit(em, event, { ...row, ...patch });
  }

  // ---- internals ----

  /** Creates the refund's withdrawal in the caller's transaction and links it: the refund takes its status. */
  private async startWithdrawal(
    em: EntityManager,
    row: RefundRow,
    price: Awaited<ReturnType<WithdrawalService['priceRefund']>> & { to: string },
    limits: RefundCaller['limits'] | null,
  ): Promise<RefundRow> {
    const w = await this.deps.withdrawals.createForRefund(em, {
      accountId: row.account_id,
      apiKeyId: row.api_key_id,
      refundId: row.id,
      payout: price.payout,
      send: price.send,
      fees: price.fees,
      toAddress: price.to,
      comment: row.comment,
      limits,
    });
    const patch = { status: w.status as RefundStatus, withdrawal_id: w.id, to_address: price.to, hold_id: null, expires_at: null, updated_at: w.updated_at };
    if ((await updateRows(em, 'refunds', patch, { id: row.id, status: 'awaiting_address' })) !== 1) throw notAwaiting(row.status);
    return { ...row, ...patch };
  }

  /** A refund without a withdrawal ends (cancelled or expired): its hold released, its amount refundable again, its event. */
  private async end(em: EntityManager, row: RefundRow, to: 'cancelled' | 'expired'): Promise<RefundRow> {
    const now = iso(this.deps.clock.now());
    const patch = { status: to, hold_id: null, updated_at: now };
    if ((await updateRows(em, 'refunds', patch, { id: row.id, status: 'awaiting_address' })) !== 1)
      throw conflict('the refund changed meanwhile; read it again');
    if (row.hold_id !== null) await this.deps.withdrawals.releaseRefundHold(em, row.hold_id);
    await this.addRefunded(em, row, Amount.zero().minus(Amount.of(row.amount)));
    const next = { ...row, ...patch };
    await this.emit(em, to === 'cancelled' ? 'refund.cancelled' : 'refund.expired', next);
    return next;
  }

  /** Adds `change` to the refunded amount of the refund's invoice and transaction (their rows locked on PostgreSQL). */
  private async addRefunded(em: EntityManager, r: Pick<RefundRow, 'invoice_id' | 'transaction_id'>, change: Amount): Promise<void> {
    for (const [table, id] of [
      ['invoices', r.invoice_id],
      ['transactions', r.transaction_id],
    ] as const) {
      if (id === null) continue;
      await lockRow(em, table, id);
      const [was] = await rawQuery<{ refunded_amount: string }>(em, `SELECT refunded_amount FROM ${table} WHERE id = ${placeholder(em, 1)}`, [id]);
      if (!was) continue;
      const next = Amount.of(was.refunded_amount).plus(change);
      await updateRows(em, table, { refunded_amount: (next.isNegative() ? Amount.zero() : next).toString() }, { id });
    }
  }

  /**
   * What is refunded from: the invoice and/or the incoming transaction, the account's own (404
   * otherwise). `lock`: in the creating transaction, their rows locked on PostgreSQL.
   */
  private async sourceOf(em: EntityManager, accountId: string, req: RefundRequest, lock = false): Promise<Source> {
    const p = (i: number) => placeholder(em, i);
    let tx: TransactionRow | null = null;
    let invoice: InvoiceRow | null = null;
    if (req.transactionId !== null) {
      if (lock) await lockRow(em, 'transactions', req.transactionId);
      [tx = null] = await rawQuery<TransactionRow>(em, `SELECT * FROM transactions WHERE id = ${p(1)} AND account_id = ${p(2)}`, [
        req.transactionId,
        accountId,
      ]);
      if (!tx) throw notFound('transaction');
      if ((tx.type !== 'invoice_payment' && tx.type !== 'deposit') || tx.reverses_id !== null)
        throw validationError('transaction_id', 'transaction_id must be an incoming invoice_payment or deposit');
      if (req.invoiceId !== null && tx.invoice_id !== req.invoiceId)
        throw validationError('transaction_id', 'the transaction is not a payment of this invoice');
    }
    const invoiceId = req.invoiceId ?? tx?.invoice_id ?? null;
    if (invoiceId !== null) {
      if (lock) await lockRow(em, 'invoices', invoiceId);
      [invoice = null] = await rawQuery<InvoiceRow>(em, `SELECT * FROM invoices WHERE id = ${p(1)} AND account_id = ${p(2)}`, [invoiceId, accountId]);
      if (!invoice) throw notFound('invoice');
    }
    const coinId = tx?.coin_id ?? invoice?.coin_id ?? null;
    // An invoice no coin was chosen for received nothing.
    if (coinId === null) throw exceeds(Amount.zero());
    return { coinId, invoice, tx };
  }

  /**
   * The refund's amount: the decimal asked, everything left (`all`), or the invoice's overpayment
   * less what was refunded already (`excess`); never more than received (confirmed) less earlier
   * refunds: 409 `refund_exceeds_received` otherwise.
   */
  private resolveAmount(raw: string, s: Source, decimals: number): Amount {
    const left = this.refundable(s);
    let amount: Amount;
    if (raw === 'all') amount = left;
    else if (raw === 'excess') {
      if (!s.invoice) throw validationError('amount', '"excess" refunds an invoice\'s overpayment: give invoice_id, or a payment of an invoice');
      amount = this.excess(s.invoice, left);
    } else amount = parseRefundAmount(raw, decimals);
    if (!amount.isPositive() || amount.cmp(left) > 0) throw exceeds(left);
    return amount;
  }

  /** `"excess"`: the invoice's overpayment less what was refunded from it already, and no more than `left`. */
  private excess(invoice: InvoiceRow, left: Amount): Amount {
    const excess = Amount.of(invoice.overpaid_amount).minus(Amount.of(invoice.refunded_amount));
    return excess.cmp(left) < 0 ? excess : left;
  }

  /** Received (confirmed) less the live refunds, of the invoice and of the transaction, whichever is less. */
  private refundable(s: Source): Amount {
    let left: Amount | null = null;
    if (s.invoice) left = Amount.of(s.invoice.paid_amount).minus(Amount.of(s.invoice.refunded_amount));
    if (s.tx) {
      const received = s.tx.status === 'confirmed' ? Amount.of(s.tx.amount) : Amount.zero();
      const txLeft = received.minus(Amount.of(s.tx.refunded_amount ?? '0'));
      left = left === null || txLeft.cmp(left) < 0 ? txLeft : left;
    }
    return left === null || left.isNegative() ? Amount.zero() : left;
  }

  /**
   * The refund a refund_id already names: the same values (the amount's word matching any amount)
   * return it; other values are 409 `conflict`.
   */
  private async findRepeat(em: EntityManager, accountId: string, req: RefundRequest): Promise<RefundRow | null> {
    if (req.refundId === null) return null;
    const p = (i: number) => placeholder(em, i);
    const [r] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE account_id = ${p(1)} AND refund_id = ${p(2)}`, [accountId, req.refundId]);
    if (!r) return null;
    const sameAmount = req.amount === 'all' || req.amount === 'excess' || safeEq(req.amount, r.amount);
    const sameSource = (req.invoiceId === null || req.invoiceId === r.invoice_id) && (req.transactionId === null || req.transactionId === r.transaction_id);
    const sameAddress = req.toAddress === null ? r.token_hash !== null : sameAddressOf(req.toAddress, r.to_address);
    if (!sameAmount || !sameSource || !sameAddress || req.feePaidBy !== r.network_fee_paid_by)
      throw conflict('this refund_id names a refund with other parameters', { reason: 'refund_id_mismatch', refund: r.id });
    return r;
  }

  private query(accountId: string, f: RefundFilters) {
    const qb = this.deps.store.read.createQueryBuilder(RefundEntity, 'r').where('r.account_id = :accountId', { accountId });
    if (f.status !== undefined) qb.andWhere('r.status = :status', { status: f.status });
    if (f.invoice_id !== undefined) qb.andWhere('r.invoice_id = :invoiceId', { invoiceId: f.invoice_id });
    if (f.refund_id !== undefined) qb.andWhere('r.refund_id = :refundId', { refundId: f.refund_id });
    return qb.orderBy('r.created_at', 'DESC').addOrderBy('r.id', 'DESC');
  }

  private async find(em: EntityManager, accountId: string, id: string): Promise<RefundRow> {
    const [row] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE id = ${placeholder(em, 1)} AND account_id = ${placeholder(em, 2)}`, [
      id,
      accountId,
    ]);
    if (!row) throw notFound('refund');
    return row;
  }

  /** The refund a payer link names: the token's hash finds it, and the path's id must be its invoice's or transaction's. */
  private async byToken(em: EntityManager, pathId: string, token: string): Promise<RefundRow | null> {
    if (!TOKEN_SHAPE.test(token)) return null;
    const [row] = await rawQuery<RefundRow>(em, `SELECT * FROM refunds WHERE token_hash = ${placeholder(em, 1)}`, [hashToken(token)]);
    if (!row || (row.invoice_id ?? row.transaction_id) !== pathId.toLowerCase()) return null;
    return row;
  }

  /** The payer's address in the stored spelling, checked as for a withdrawal (422 `address_refused`). */
  private payerAddress(row: RefundRow, raw: unknown): string {
    if (typeof raw !== 'string' || raw.trim().length === 0 || raw.length > 128) throw validationError('to_address', 'to_address must be an address');
    const payout = this.deps.withdrawals.payoutCoin(row.coin_id);
    const to = raw.trim();
    this.deps.withdrawals.checkDestination(payout, to);
    return payout.sender.canonicalAddress?.(to) ?? to;
  }

  /** The account's name, the one thing of the merchant the payer page shows. */
  private async merchantName(accountId: string): Promise<string | null> {
    const em = this.deps.store.read;
    const [a] = await rawQuery<{ name: string }>(em, `SELECT name FROM accounts WHERE id = ${placeholder(em, 1)}`, [accountId]);
    return a?.name ?? null;
  }

  private pageOf(r: RefundRow, merchantName: string | null = null): RefundPageView {
    const coin = this.deps.catalog.coin(r.coin_id);
    const chain = this.deps.chains.find((c) => c.id === coin?.chain_id);
    return {
      status: r.status,
      amount: r.amount,
      ticker: coin?.ticker ?? '',
      network: coin?.network ?? '',
      network_name: chain ? networkLabel(chain).name : (coin?.network ?? ''),
      network_fee_paid_by: r.network_fee_paid_by,
      to_address: r.to_address,
      txid: r.txid,
      expires_at: r.status === 'awaiting_address' ? r.expires_at : null,
      merchant_name: merchantName,
    };
  }

  /** The payer link, while the refund has one. */
  private refundUrl(r: RefundRow): string | null {
    if (r.token_sealed === null) return null;
    const token = this.deps.sealer.open(r.token_sealed, { table: 'refunds', column: 'token_sealed', row: r.id });
    return `${this.deps.baseUrl}/pay/${r.invoice_id ?? r.transaction_id}/refund/${token}`;
  }

  private async emit(em: EntityManager, type: EventType, row: RefundRow): Promise<void> {
    await this.deps.outbox.emit(em, { accountId: row.account_id, type, data: { refund: this.present(row) }, objectId: row.id, at: this.deps.clock.now() });
  }
}

const exceeds = (left: Amount): ApiError =>
  conflict('the refund is more than was received less earlier refunds', { reason: 'refund_exceeds_received', refundable: left.toString() });

const notAwaiting = (status: RefundStatus): ApiError =>
  conflict(status === 'expired' ? 'this refund link has expired' : 'this refund has its address already', { reason: 'refund_not_awaiting_address', status });

function safeEq(raw: string, stored: string): boolean {
  try {
    return Amount.of(raw).eq(Amount.of(stored));
  } catch {
    return false;
  }
}

const sameAddressOf = (given: string, stored: string | null): boolean => stored !== null && given.toLowerCase() === stored.toLowerCase();
