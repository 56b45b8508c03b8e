import { IsNull, type EntityManager } from 'typeorm';
import type { Catalog, Coin } from '../catalog/coins';
import { InvoiceEntity, type InvoiceRow } from '../db/entities/money';
import type { AccountRow } from '../db/entities/team';
import { insertRow, placeholder, rawQuery, updateRows } from '../db/raw';
import { GroupCommit } from '../db/group-commit';
import { scoped } from '../db/tx-scope';
import { applyKeyset, countUpTo, keysetBatches, type PageKey } from '../db/keyset';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import type { RateEngine } from '../rates/engine';
import { iso, type Clock } from '../shared/clock';
import { conflict, notFound, validationError } from '../shared/errors';
import { newTimeOrderedId } from '../shared/ids';
import type { Logger } from '../shared/logger';
import { Amount } from '../shared/amount';
import type { AddressAllocator } from '../wallet/allocator';
import { isFiat, offersCoin, type CreateInvoiceRequest } from './invoice.request';
import { listInvoicesQuery, type InvoiceFilters } from './invoice.query';
import type { InvoicePresenter, InvoiceView } from './invoice.view';
import { invoiceEvents, stateChanged, type RecomputeCause } from './invoice.events';
import { InvoiceChanges } from './invoice-changes';
import { orderRepeat } from './order-rule';
import { priceInvoice } from './pricing';
import { computeInvoiceState, termsOf, type TransferFact } from './invoice.state';

export type { RecomputeCause } from './invoice.events';

export interface InvoiceServiceDeps {
  store: Store;
  catalog: Catalog;
  rates: RateEngine;
  allocator: AddressAllocator;
  outbox: Outbox;
  presenter: InvoicePresenter;
  clock: Clock;
  logger: Logger;
}

const EXPIRY_BATCH = 200;

type AccountSettings = Pick<AccountRow, 'platform_fee_percent' | 'invoice_ttl_minutes' | 'underpayment_tolerance_percent' | 'default_fiat'>;

/** An invoice row as plain SQL reads it: SQLite gives its booleans as 0 and 1. */
const invoiceOf = (r: InvoiceRow): InvoiceRow => ({ ...r, late_payment: Boolean(r.late_payment), idempotency_by_order_id: Boolean(r.idempotency_by_order_id) });

/**
 * Invoices: creation with its pricing and order rules, reads, cancel, expiry, and the one place
 * that writes a status (`recompute`), always from the pure state table and always with its event
 * in the same transaction.
 */
export class InvoiceService {
  /** Creations arriving together share one SQLite transaction (see group-commit.ts). */
  private readonly creations: GroupCommit;
  /** Committed changes of invoices, by id (the payment pages' event streams). */
  readonly changes = new InvoiceChanges();

  constructor(private readonly deps: InvoiceServiceDeps) {
    this.creations = new GroupCommit(deps.store);
  }

  /** Creates the invoice, or returns the order's open one (`created: false`, SPEC rule 2). */
  async create(accountId: string, req: CreateInvoiceRequest): Promise<{ invoice: InvoiceView; created: boolean }> {
    const { clock } = this.deps;
    return this.creations.run(async (em) => {
      const account = await this.lockAccount(em, accountId, req.idempotencyByOrderId);
      if (req.idempotencyByOrderId && req.orderId !== null) {
        const existing = await this.orderRepeat(em, accountId, req);
        if (existing) return { invoice: this.deps.presenter.present(existing), created: false };
      }
      const now = clock.now();
      const at = iso(now);
      const id = newTimeOrderedId(now.getTime());
      const row: InvoiceRow = {
        id,
        account_id: accountId,
        status: 'new',
        currency: req.currency,
        amount: req.amount.toString(),
        coin_id: null,
        address_id: null,
        address: null,
        amount_crypto: null,
        payer_amount: null,
        paid_amount: '0',
        remaining_amount: '0',
        overpaid_amount: '0',
        refunded_amount: '0',
        resolution: null,
        amount_fiat: null,
        fiat_currency: null,
        rate_locked: null,
        rate_locked_at: null,
        late_payment: false,
        fee_paid_by: req.feePaidBy,
        fee_percent: null,
        tolerance_percent: account.underpayment_tolerance_percent,
        order_id: req.orderId,
        idempotency_by_order_id: req.idempotencyByOrderId,
        description: req.description,
        return_url: req.returnUrl,
        webhook_url: req.webhookUrl,
        metadata: req.metadata === null ? null : JSON.stringify(req.metadata),
        allowed_coin_ids: req.allowedCoinIds === null ? null : JSON.stringify(req.allowedCoinIds),
        ttl_expires_at: iso(new Date(now.getTime() + account.invoice_ttl_minutes * 60_000)),
        expired_at: null,
        cancelled_at: null,
        created_at: at,
        updated_at: at,
      };
      if (req.coin) Object.assign(row, await this.fixCoin(em, row, req.coin, account, now));
      await insertRow(em, 'invoices', row);
      return { invoice: this.deps.presenter.present(row), created: true };
    });
  }

  /**
   * The payer's coin choice on the payment page (PRODUCT §6): fixes the coin exactly as creation
   * with `coin_id` does, once. The row is locked (PostgreSQL) or the write serialised (SQLite) and
   * the update is guarded on a still coinless row, so of two choices at the same time the second
   * finds the coin fixed and gets that same invoice back, whatever coin it asked for.
   */
  async chooseCoin(id: string, coinId: string): Promise<InvoiceRow> {
    return this.creations.run(async (em) => {
      const row = await this.lockInvoice(em, id);
      if (!row) throw notFound('invoice');
      if (row.coin_id !== null) return row;
      const now = this.deps.clock.now();
      const current = computeInvoiceState(termsOf(row), [], now).status;
      if (row.status !== 'new' || current !== 'new') {
        throw conflict(`a coin can be chosen only while the invoice is new; this one is ${current}`, { status: current });
      }
      const coin = this.deps.catalog.coin(coinId);
      if (!coin || !this.coinChoices(row).includes(coin)) throw validationError('coin_id', 'coin_id is not among the coins this invoice can be paid in');
      const account = await this.lockAccount(em, row.account_id, false);
      const patch = { ...(await this.fixCoin(em, row, coin, account, now)), updated_at: iso(now) };
      const res = await em.update(InvoiceEntity, { id: row.id, status: 'new', coin_id: IsNull() }, patch);
      if (res.affected !== 1) throw new Error(`invoice ${row.id} changed under a coin choice`);
      this.changes.changed(em, row.id);
      return { ...row, ...patch };
    });
  }

  /** The coins a coinless invoice can still be paid in: its allowed ones, or all offered for its currency, none in maintenance. */
  coinChoices(row: InvoiceRow): Coin[] {
    const { catalog } = this.deps;
    const fiat = isFiat(catalog, row.currency);
    const ids: string[] | null = row.allowed_coin_ids === null ? null : JSON.parse(row.allowed_coin_ids);
    return catalog.coins().filter((c) => (ids === null || ids.includes(c.id)) && offersCoin(catalog, row.currency, fiat, c));
  }

  async get(accountId: string, id: string): Promise<InvoiceView> {
    const row = await this.find(this.deps.store.read, accountId, id);
    return this.deps.presenter.present(row);
  }

  async page(accountId: string, filters: InvoiceFilters, page: PageRequest): Promise<Page<InvoiceView>> {
    const rows = await applyKeyset(listInvoicesQuery(this.deps.store.read, accountId, filters), 'i', page).getMany();
    return toPage(rows, page, this.deps.presenter.present);
  }

  /**
   * The whole filtered list in list order (from `after` on), `size` rows at a time, one batch in
   * memory at a time (exports); rows as read, each presented as the export writes it.
   */
  batches(accountId: string, filters: InvoiceFilters, after: PageKey | null, size: number): AsyncIterable<InvoiceRow[]> {
    const build = () => listInvoicesQuery(this.deps.store.read, accountId, filters);
    return keysetBatches(build, 'i', { after, batchSize: size, read: (qb) => qb.getMany() as Promise<InvoiceRow[]>, keyOf: (r) => r });
  }

  /** An invoice row as the API shows it. */
  present(row: InvoiceRow): InvoiceView {
    return this.deps.presenter.present(row);
  }

  /** How many invoices an export has, counting no further than `cap`. */
  count(accountId: string, filters: InvoiceFilters, after: PageKey | null, cap: number): Promise<number> {
    const qb = listInvoicesQuery(this.deps.store.read, accountId, filters);
    if (after) applyKeyset(qb, 'i', { limit: cap, after });
    return countUpTo(qb, cap);
  }

  /** Only from `new` (SPEC); anything else, including an invoice whose TTL has passed, is 409. */
  async cancel(accountId: string, id: string): Promise<InvoiceView> {
    return this.deps.store.write(async (em) => {
      const row = await this.find(em, accountId, id, true);
      const now = this.deps.clock.now();
      const current = computeInvoiceState(termsOf(row), await this.transfersOf(em, row), now).status;
      if (row.status !== 'new' || current !== 'new') {
        throw conflict(`an invoice can be cancelled only while new; this one is ${current}`, { status: current });
      }
      const patch = { status: 'cancelled' as const, cancelled_at: iso(now), updated_at: iso(now) };
      const res = await em.update(InvoiceEntity, { id: row.id, status: 'new' }, patch);
      if (res.affected !== 1) throw conflict('the invoice changed meanwhile; read it again');
      this.changes.changed(em, row.id);
      return this.deps.presenter.present({ ...row, ...patch });
    });
  }

  /**
   * POST /v1/invoices/{id}/accept (PRODUCT §16): an underpaid invoice accepted as paid, for good
   * (`resolution`), `invoice.paid` sent. Nothing is credited: its payments were when they confirmed.
   */
  async accept(accountId: string, id: string): Promise<InvoiceView> {
    return this.deps.store.write(async (em) => {
      const row = await this.find(em, accountId, id, true);
      const now = this.deps.clock.now();
      const current = computeInvoiceState(termsOf(row), await this.transfersOf(em, row), now).status;
      if (row.status !== 'underpaid' || current !== 'underpaid' || row.resolution !== null) {
        throw conflict(`only an underpaid invoice can be accepted; this one is ${current}`, { reason: 'invoice_not_underpaid', status: current });
      }
      if ((await updateRows(em, 'invoices', { resolution: 'accepted_underpayment' }, { id: row.id, status: 'underpaid' })) !== 1) {
        throw conflict('the invoice changed meanwhile; read it again');
      }
      return this.deps.presenter.present(await this.recompute(em, { ...row, resolution: 'accepted_underpayment' }, null));
    });
  }

  /** Expires every invoice whose TTL has passed (also those that fell due while the daemon was down). */
  async expireDue(signal?: AbortSignal): Promise<number> {
    let done = 0;
    for (;;) {
      if (signal?.aborted) return done;
      const now = this.deps.clock.now();
      const due = await this.deps.store.read
        .createQueryBuilder(InvoiceEntity, 'i')
        .select(['i.id'])
        .where('i.status = :status AND i.ttl_expires_at < :now', { status: 'new', now: iso(now) })
        .orderBy('i.ttl_expires_at', 'ASC')
        .limit(EXPIRY_BATCH)
        .getMany();
      for (const { id } of due) {
        await this.deps.store.write(async (em) => {
          const row = await this.lockInvoice(em, id);
          if (row) await this.recompute(em, row, null);
        });
        done++;
      }
      if (due.length < EXPIRY_BATCH) return done;
    }
  }

  /**
   * Recomputes an invoice from its terms and transfers and, when anything changed, writes it with
   * its events, in the caller's transaction (the chain core's for a transfer, the expiry job's for
   * time). The caller has locked the row.
   */
  async recompute(em: EntityManager, row: InvoiceRow, cause: RecomputeCause): Promise<InvoiceRow> {
    const now = this.deps.clock.now();
    const state = computeInvoiceState(termsOf(row), await this.transfersOf(em, row), now);
    const next: InvoiceRow = { ...row, ...state, updated_at: iso(now) };
    // A transfer's change moves what the payer's page shows (its confirmations) even when the invoice's state stays.
    if (cause || stateChanged(row, state)) this.changes.changed(em, row.id);
    if (!stateChanged(row, state)) return row;
    const changedRows = await updateRows(
      em,
      'invoices',
      {
        status: next.status,
        paid_amount: next.paid_amount,
        remaining_amount: next.remaining_amount,
        overpaid_amount: next.overpaid_amount,
        late_payment: next.late_payment,
        expired_at: next.expired_at,
        updated_at: next.updated_at,
      },
      { id: row.id, status: row.status },
    );
    if (changedRows !== 1) throw new Error(`invoice ${row.id} changed under a recomputation`);
    for (const type of invoiceEvents(row, next, cause)) {
      const data: Record<string, unknown> = { invoice: this.deps.presenter.present(next) };
      if (cause) data.details = { amount: cause.transfer.amount, chain_transaction_id: cause.transfer.txid };
      await this.deps.outbox.emit(em, { accountId: row.account_id, type, data, objectId: row.id, callbackUrl: row.webhook_url, at: now });
    }
    return next;
  }

  /**
   * The invoice an address was issued for, locked for the caller's transaction; null if none. Once
   * per transfer in the chain core's transaction: one plain query, as are the recomputation's.
   */
  async lockByAddress(em: EntityManager, addressId: string): Promise<InvoiceRow | null> {
    // Through the address row's own invoice_id (a primary-key read): the invoices table needs no
    // index on address_id, one index less to write on every invoice creation.
    const lock = em.connection.options.type === 'postgres' ? ' FOR UPDATE OF i' : '';
    const rows = await rawQuery<InvoiceRow>(
      em,
      `SELECT i.* FROM addresses a JOIN invoices i ON i.id = a.invoice_id WHERE a.id = ${placeholder(em, 1)}${lock}`,
      [addressId],
    );
    return rows.length > 0 ? invoiceOf(rows[0]!) : null;
  }

  /**
   * The transfers of the invoice's own coin to its address (other coins are credited, not counted),
   * as the state table reads them: this runs once per payment in the chain core's transaction,
   * where handing over a row's other columns took about as long as the read itself. Incoming only:
   * a payout or sweep that spends what the address received is an outgoing row of the same address,
   * never a payment.
   */
  private async transfersOf(em: EntityManager, row: InvoiceRow): Promise<TransferFact[]> {
    if (row.address_id === null || row.coin_id === null) return [];
    return rawQuery<TransferFact>(
      em,
      `SELECT amount, status, seen_at FROM chain_transfers WHERE address_id = ${placeholder(em, 1)} AND coin_id = ${placeholder(em, 2)} AND direction = 'incoming'`,
      [row.address_id, row.coin_id],
    );
  }

  private async find(em: EntityManager, accountId: string, id: string, lock = false): Promise<InvoiceRow> {
    const row = lock ? await this.lockInvoice(em, id) : await em.findOneBy(InvoiceEntity, { id });
    if (!row || row.account_id !== accountId) throw notFound('invoice');
    return row;
  }

  private async lockInvoice(em: EntityManager, id: string): Promise<InvoiceRow | null> {
    if (em.connection.options.type !== 'postgres') return em.findOneBy(InvoiceEntity, { id });
    return em.findOne(InvoiceEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /**
   * The account's invoice settings, read with plain SQL (this is the hot path of creation); with the
   * order rule on PostgreSQL the row is locked so two copies of one order serialise.
   */
  private async lockAccount(em: EntityManager, accountId: string, forOrder: boolean): Promise<AccountSettings> {
    const lock = forOrder && em.connection.options.type === 'postgres' ? ' FOR UPDATE' : '';
    // Creations sharing one transaction (group commit) read the account once (tx-scope): nothing
    // else writes it inside that transaction.
    const kept = scoped(em, KEPT_SETTINGS, () => new Map<string, AccountSettings>());
    const known = kept?.get(accountId);
    if (known && lock === '') return known;
    const rows = await rawQuery<AccountSettings>(
      em,
      `SELECT platform_fee_percent, invoice_ttl_minutes, underpayment_tolerance_percent, default_fiat FROM accounts WHERE id = ${placeholder(em, 1)}${lock}`,
      [accountId],
    );
    if (rows.length === 0) throw notFound('account');
    const settings = { ...rows[0]!, invoice_ttl_minutes: Number(rows[0]!.invoice_ttl_minutes) };
    kept?.set(accountId, settings);
    return settings;
  }

  /** The order's open invoice to return, or null for a new one; 409 when the order rules refuse (order-rule.ts, SPEC rules 2–3). */
  private async orderRepeat(em: EntityManager, accountId: string, req: CreateInvoiceRequest): Promise<InvoiceRow | null> {
    const rows = await em.find(InvoiceEntity, { where: { account_id: accountId, order_id: req.orderId! }, order: { created_at: 'DESC', id: 'DESC' } });
    return orderRepeat(rows, req, this.deps.clock.now());
  }

  /**
   * Everything that fixing the coin sets on an invoice (creation with `coin_id`, or the payer's
   * choice): the locked price and a deposit address issued for this invoice.
   */
  private async fixCoin(em: EntityManager, row: InvoiceRow, coin: Coin, account: AccountSettings, now: Date) {
    const terms = { amount: Amount.of(row.amount), currency: row.currency, fiat: isFiat(this.deps.catalog, row.currency), feePaidBy: row.fee_paid_by };
    const { catalog, rates } = this.deps;
    const shownIn = terms.fiat ? undefined : catalog.fiats().find((f) => f.code === (account.default_fiat ?? catalog.defaultFiat));
    const pricing = priceInvoice(terms, coin, account.platform_fee_percent, (ticker, fiat) => rates.rate(ticker, fiat).rate, shownIn);
    const address = await this.deps.allocator.allocate(em, { accountId: row.account_id, coinId: coin.id, purpose: 'invoice', invoiceId: row.id });
    return {
      coin_id: coin.id,
      address_id: address.id,
      address: address.address,
      amount_crypto: pricing.amountCrypto,
      payer_amount: pricing.payerAmount,
      remaining_amount: pricing.payerAmount,
      amount_fiat: pricing.amountFiat,
      fiat_currency: pricing.fiatCurrency,
      rate_locked: pricing.rate,
      rate_locked_at: pricing.rate ? iso(now) : null,
      fee_percent: account.platform_fee_percent,
    };
  }
}

/** The key of the account settings kept for a transaction (tx-scope), by account id. */
const KEPT_SETTINGS = {};
