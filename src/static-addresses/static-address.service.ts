import type { EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { ArchivedAddresses, UnwatchedAddress } from '../chains/archived-addresses';
import { DENSE_MATCHES, FEW_ROWS, likeAnywhere, phrase, planFromProbe, planFromTail, PROBE_ROWS, searchStart, type SearchPlan } from './static-address.search';
import { archiveAtOf, archivedFields, depositNoted, idleCutoffs, nextStaticAddressMove, restoredFields } from './static-address.state';
import { StaticAddressEntity, type StaticAddressRow } from '../db/entities/static-address';
import { applyKeyset, countUpTo, keysetBatches, type PageKey } from '../db/keyset';
import { insertRow, isUniqueViolation, placeholder, rawQuery, rawRun, updateRows } from '../db/raw';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import { iso, type Clock } from '../shared/clock';
import { conflict, notFound, type ApiError } from '../shared/errors';
import type { EventType } from '../shared/events';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import type { AddressAllocator } from '../wallet/allocator';
import type { CreateStaticAddressRequest, StaticAddressFilters } from './static-address.request';
import { presentDeposit, presentStaticAddress, type DepositRow, type DepositView, type StaticAddressView } from './static-address.view';

export interface StaticAddressServiceDeps {
  store: Store;
  catalog: Catalog;
  allocator: AddressAllocator;
  outbox: Outbox;
  clock: Clock;
  /** Archived addresses leave the real-time watched set, and come back to it when restored. */
  archived: ArchivedAddresses;
}

/** How many deposits GET /v1/addresses/{id} shows, newest first; the transactions list has them all. */
export const DEPOSIT_HISTORY_MAX = 100;

/** Why an address became active again. */
export type RestoreReason = 'manual' | 'deposit';

/** Idle addresses handled per read of the automatic archive. */
const IDLE_BATCH = 200;

const activeConflict = (activeId: string): ApiError => conflict('the customer already has an active address for this coin', { active_address_id: activeId });

/**
 * Static addresses (PRODUCT §7): creation (one active address per account, coin and customer,
 * held by a unique index), reads, archive and restore, each state change with its event in the
 * same transaction. The deposit handler books deposits through the money owner and calls
 * `noteDeposit` and `emitDeposit` here.
 */
export class StaticAddressService {
  constructor(private readonly deps: StaticAddressServiceDeps) {}

  present = (r: StaticAddressRow): StaticAddressView => presentStaticAddress(this.deps.catalog, r);

  async create(accountId: string, req: CreateStaticAddressRequest): Promise<StaticAddressView> {
    const { store, clock } = this.deps;
    try {
      const row = await store.write(async (em) => {
        const active = await this.activeOf(em, accountId, req.coin.id, req.customerId);
        if (active) throw activeConflict(active.id);
        const issued = await this.deps.allocator.allocate(em, { accountId, coinId: req.coin.id, purpose: 'static' });
        const now = iso(clock.now());
        const row: StaticAddressRow = {
          id: issued.id,
          account_id: accountId,
          customer_id: req.customerId,
          coin_id: req.coin.id,
          address: issued.address,
          label: req.label,
          status: 'active',
          archived_at: null,
          last_deposit_at: null,
          idle_since: now,
          warned_at: null,
          deposit_revived: 0,
          created_at: now,
          updated_at: now,
        };
        await insertRow(em, 'static_addresses', row);
        return row;
      });
      return this.present(row);
    } catch (err) {
      // Two creations at once (PostgreSQL): the unique index refused the second; it names the first.
      if (!isUniqueViolation(err)) throw err;
      const active = await this.activeOf(store.read, accountId, req.coin.id, req.customerId);
      if (!active) throw err;
      throw activeConflict(active.id);
    }
  }

  async get(accountId: string, id: string): Promise<StaticAddressView & { deposits: DepositView[] }> {
    const em = this.deps.store.read;
    const row = await this.find(em, accountId, id);
    const deposits = await rawQuery<DepositRow>(
      em,
      `SELECT t.*, ct.confirmations AS confirmations FROM transactions t LEFT JOIN chain_transfers ct ON ct.id = t.chain_transfer_id
       WHERE t.address_id = ${placeholder(em, 1)} AND t.account_id = ${placeholder(em, 2)} AND t.type = 'deposit'
       ORDER BY t.created_at DESC, t.id DESC LIMIT ${DEPOSIT_HISTORY_MAX}`,
      [id, accountId],
    );
    return { ...this.present(row), deposits: deposits.map(presentDeposit) };
  }

  async page(accountId: string, filters: StaticAddressFilters, page: PageRequest): Promise<Page<StaticAddressView>> {
    const rows = await applyKeyset(this.query(accountId, filters, await this.searchPlan(accountId, filters.search)), 's', page).getMany();
    return toPage(rows, page, this.present);
  }

  async *batches(accountId: string, filters: StaticAddressFilters, after: PageKey | null, size: number): AsyncIterable<StaticAddressRow[]> {
    const plan = await this.searchPlan(accountId, filters.search);
    yield* keysetBatches(() => this.query(accountId, filters, plan) as SelectQueryBuilder<ObjectLiteral>, 's', {
      after,
      batchSize: size,
      read: (qb) => qb.getMany() as Promise<StaticAddressRow[]>,
      keyOf: (r) => r,
    });
  }

  async count(accountId: string, filters: StaticAddressFilters, after: PageKey | null, cap: number): Promise<number> {
    const qb = this.query(accountId, filters, await this.searchPlan(accountId, filters.search));
    if (after) applyKeyset(qb, 's', { limit: cap, after });
    return countUpTo(qb as SelectQueryBuilder<ObjectLiteral>, cap);
  }

  /** POST /v1/addresses/{id}/archive: an active address leaves the customer's active set. */
  async archive(accountId: string, id: string): Promise<StaticAddressView> {
    const next = await this.deps.store.write(async (em) => {
      const row = await this.find(em, accountId, id, true);
      if (!nextStaticAddressMove(row.status, 'archive_manual')) throw conflict('the address is already archived');
      const next = await this.archiveRow(em, row, 'manual');
      if (!next) throw conflict('the address is already archived');
      return next;
    });
    this.deps.archived.forget(this.unwatched(next));
    return this.present(next);
  }

  /**
   * Archives an active row (guarded by its status and, for the automatic archive, its idle
   * period): it leaves the customer's active set and the real-time watched set (the slow scan takes
   * over), with `static_address.archived`. Null when another change came first.
   */
  private async archiveRow(em: EntityManager, row: StaticAddressRow, reason: 'manual' | 'inactive'): Promise<StaticAddressRow | null> {
    const now = iso(this.deps.clock.now());
    const move = nextStaticAddressMove(row.status, reason === 'inactive' ? 'archive_inactive' : 'archive_manual');
    if (!move) return null;
    const set = { status: move.to, ...archivedFields(now) };
    const where = reason === 'inactive' ? { id: row.id, status: row.status, idle_since: row.idle_since } : { id: row.id, status: row.status };
    if ((await updateRows(em, 'static_addresses', set, where)) !== 1) return null;
    const next: StaticAddressRow = { ...row, ...set };
    await this.deps.archived.unwatch(em, this.unwatched(next), now);
    await this.emit(em, move.event, next, { address: this.present(next), reason: move.reason });
    return next;
  }

  /** The address row a static address was issued as (same id), on its coin's chain. */
  private unwatched(row: StaticAddressRow): UnwatchedAddress {
    const coin = this.deps.catalog.coin(row.coin_id);
    if (!coin) throw new Error(`static address ${row.id} has the unknown coin ${row.coin_id}`);
    return { id: row.id, chainId: coin.chain_id, address: row.address };
  }

  /** POST /v1/addresses/{id}/restore: refused while the customer has another active address for the coin. */
  async restore(accountId: string, id: string): Promise<StaticAddressView> {
    const { store } = this.deps;
    try {
      return await store.write(async (em) => {
        const row = await this.find(em, accountId, id, true);
        if (!nextStaticAddressMove(row.status, 'restore_manual')) throw conflict('the address is already active', { active_address_id: row.id });
        const active = await this.activeOf(em, accountId, row.coin_id, row.customer_id);
        if (active) throw activeConflict(active.id);
        const next = await this.reactivate(em, row, 'manual', false);
        if (!next) throw conflict('the address is already active', { active_address_id: row.id });
        return this.present(next);
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const row = await this.find(store.read, accountId, id);
      const active = await this.activeOf(store.read, accountId, row.coin_id, row.customer_id);
      if (!active) throw err;
      throw activeConflict(active.id);
    }
  }

  /** The address a transfer paid, locked for the deposit's change (PostgreSQL); null when it is not a static address. */
  async lockForDeposit(em: EntityManager, id: string): Promise<StaticAddressRow | null> {
    const lock = em.connection.options.type === 'postgres' ? ' FOR UPDATE' : '';
    const [row] = await rawQuery<StaticAddressRow>(em, `SELECT * FROM static_addresses WHERE id = ${placeholder(em, 1)}${lock}`, [id]);
    return row ?? null;
  }

  /**
   * A transfer to the address was seen: `last_deposit_at` moves forward, and an archived address
   * becomes active again (`static_address.restored`, reason `deposit`), also when the customer has
   * another active address for the coin: then both are active (docs/decisions.md). The row after
   * the change.
   */
  async noteDeposit(em: EntityManager, row: StaticAddressRow, seenAt: string): Promise<StaticAddressRow> {
    let next = row;
    const set = depositNoted(row.last_deposit_at, seenAt, iso(this.deps.clock.now()));
    if (set) {
      await updateRows(em, 'static_addresses', set, { id: row.id });
      next = { ...row, ...set };
    }
    if (nextStaticAddressMove(next.status, 'restore_deposit')) {
      const other = await this.activeOf(em, next.account_id, next.coin_id, next.customer_id);
      next = (await this.reactivate(em, next, 'deposit', other !== null)) ?? next;
    }
    return next;
  }

  /**
   * The automatic archive (SPEC "Static address"): every active address idle for `archiveAfterMs`
   * (no creation, restore or deposit since) is archived (`static_address.archived`, reason
   * `inactive`), each announced `warnMs` before by `static_address.archive_warning`. Each address
   * is its own guarded change, so a deposit arriving meanwhile keeps it active. How many were
   * warned and archived.
   */
  async archiveIdle(opts: { archiveAfterMs: number; warnMs: number; signal?: AbortSignal }): Promise<{ warned: number; archived: number }> {
    const { store, clock } = this.deps;
    const cutoffs = idleCutoffs(clock.now(), opts.archiveAfterMs, opts.warnMs);
    const archiveBefore = iso(cutoffs.archiveBefore);
    const warnBefore = iso(cutoffs.warnBefore);
    const done = { warned: 0, archived: 0 };
    const idle = (em: EntityManager, before: string, unwarned: boolean) =>
      rawQuery<StaticAddressRow>(
        em,
        `SELECT * FROM static_addresses WHERE status = 'active' AND idle_since <= ${placeholder(em, 1)}${unwarned ? ' AND warned_at IS NULL' : ''} ORDER BY idle_since LIMIT ${IDLE_BATCH}`,
        [before],
      );
    for (let rows = await idle(store.read, warnBefore, true); rows.length > 0 && !opts.signal?.aborted; rows = await idle(store.read, warnBefore, true)) {
      for (const row of rows) {
        await store.write(async (em) => {
          const now = iso(clock.now());
          const p = (i: number) => placeholder(em, i);
          const sql = `UPDATE static_addresses SET warned_at = ${p(1)} WHERE id = ${p(2)} AND status = 'active' AND idle_since = ${p(3)} AND warned_at IS NULL`;
          if ((await rawRun(em, sql, [now, row.id, row.idle_since])) !== 1) return;
          const archiveAt = iso(archiveAtOf(row.idle_since, opts.archiveAfterMs));
          await this.emit(em, 'static_address.archive_warning', row, { address: this.present(row), archive_at: archiveAt });
          done.warned++;
        });
      }
    }
    for (
      let rows = await idle(store.read, archiveBefore, false);
      rows.length > 0 && !opts.signal?.aborted;
      rows = await idle(store.read, archiveBefore, false)
    ) {
      for (const row of rows) {
        const next = await store.write((em) => this.archiveRow(em, row, 'inactive'));
        if (!next) continue;
        this.deps.archived.forget(this.unwatched(next));
        done.archived++;
      }
    }
    return done;
  }

  /**
   * SQLite: merges the search's trigram index (FTS5 `merge`) a step of `stepPages` pages at a time,
   * each step its own short write, until there is nothing left to merge or `budgetMs` has passed.
   * Every write that adds addresses leaves a small segment of the index behind, and a search reads
   * each term in every segment: merged, a substring search over 1,000,000 addresses reads a few
   * instead of a few dozen (`npm run bench addresses`). Whether it finished; true on PostgreSQL.
   */
  async mergeSearchIndex(opts: { stepPages: number; budgetMs: number; signal?: AbortSignal }): Promise<{ steps: number; done: boolean }> {
    const { store } = this.deps;
    if (store.dialect !== 'sqlite') return { steps: 0, done: true };
    const started = Date.now();
    let steps = 0;
    while (!opts.signal?.aborted && Date.now() - started < opts.budgetMs) {
      const worked = await store.write(async (em) => {
        const [before] = await rawQuery<{ n: number }>(em, 'SELECT total_changes() AS n');
        await rawRun(em, `INSERT INTO static_addresses_search (static_addresses_search, rank) VALUES ('merge', ?)`, [Math.max(1, Math.floor(opts.stepPages))]);
        const [after] = await rawQuery<{ n: number }>(em, 'SELECT total_changes() AS n');
        // FTS5: fewer than 2 changes means the step found nothing to merge.
        return Number(after!.n) - Number(before!.n) >= 2;
      });
      if (!worked) return { steps, done: true };
      steps++;
    }
    return { steps, done: false };
  }

  /** A `deposit.*` event: the address and the deposit (and, on a reversal, its adjustment). */
  async emitDeposit(
    em: EntityManager,
    type: Extract<EventType, `deposit.${string}`>,
    row: StaticAddressRow,
    deposit: DepositView,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await this.emit(em, type, row, { address: this.present(row), deposit, ...extra });
  }

  /**
   * An archived row made active again, watched in real time again, with `static_address.restored`.
   * `beside`: another address of the customer for the coin is active (a deposit's restore only);
   * the one-active-address index leaves this one out.
   */
  private async reactivate(em: EntityManager, row: StaticAddressRow, reason: RestoreReason, beside: boolean): Promise<StaticAddressRow | null> {
    const now = iso(this.deps.clock.now());
    const move = nextStaticAddressMove(row.status, reason === 'deposit' ? 'restore_deposit' : 'restore_manual');
    if (!move) return null;
    const set = { status: move.to, ...restoredFields(now, beside) };
    if ((await updateRows(em, 'static_addresses', set, { id: row.id, status: row.status })) !== 1) return null;
    const next: StaticAddressRow = { ...row, ...set };
    await this.deps.archived.rewatch(em, this.unwatched(next), now);
    await this.emit(em, move.event, next, { address: this.present(next), reason: move.reason });
    return next;
  }

  private emit(em: EntityManager, type: EventType, row: StaticAddressRow, data: Record<string, unknown>): Promise<unknown> {
    return this.deps.outbox.emit(em, { accountId: row.account_id, type, data, objectId: row.id, at: this.deps.clock.now() });
  }

  private async find(em: EntityManager, accountId: string, id: string, lock = false): Promise<StaticAddressRow> {
    const forUpdate = lock && em.connection.options.type === 'postgres' ? ' FOR UPDATE' : '';
    const [row] = await rawQuery<StaticAddressRow>(
      em,
      `SELECT * FROM static_addresses WHERE id = ${placeholder(em, 1)} AND account_id = ${placeholder(em, 2)}${forUpdate}`,
      [id, accountId],
    );
    if (!row) throw notFound('address');
    return row;
  }

  private async activeOf(em: EntityManager, accountId: string, coinId: string, customerId: string): Promise<{ id: string } | null> {
    const [row] = await rawQuery<{ id: string }>(
      em,
      `SELECT id FROM static_addresses WHERE account_id = ${placeholder(em, 1)} AND coin_id = ${placeholder(em, 2)} AND customer_id = ${placeholder(em, 3)} AND status = 'active'
       ORDER BY deposit_revived, created_at LIMIT 1`,
      [accountId, coinId, customerId],
    );
    return row ?? null;
  }

  /** How `search` is matched (static-address.search.ts): the plan, after the reads it asks for. */
  private async searchPlan(accountId: string, search: string | undefined): Promise<SearchPlan> {
    const start = searchStart(search, this.deps.store.dialect);
    if (start.kind !== 'tail') return start;
    const em = this.deps.store.read;
    const tail = await rawQuery<{ rowid: number }>(
      em,
      `SELECT rowid FROM static_addresses_search WHERE static_addresses_search MATCH ? LIMIT ${FEW_ROWS + 1}`,
      [start.phrase],
    );
    const few = planFromTail(
      start.text,
      tail.map((r) => r.rowid),
    );
    if (few) return few;
    // Counting stops at DENSE_MATCHES: a text every row holds is told common after 50 rows, not 2000.
    const [probe] = await rawQuery<{ n: number }>(
      em,
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM (SELECT address, customer_id, label FROM static_addresses WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ${PROBE_ROWS})
       WHERE instr(address, ?) > 0 OR instr(customer_id, ?) > 0 OR instr(label, ?) > 0 LIMIT ${DENSE_MATCHES})`,
      [accountId, start.text, start.text, start.text],
    );
    return planFromProbe(start.text, Number(probe?.n ?? 0));
  }

  /** One account's addresses matching the filters, newest first; `plan` is searchPlan(f.search)'s. */
  private query(accountId: string, f: StaticAddressFilters, plan: SearchPlan): SelectQueryBuilder<StaticAddressRow> {
    const qb = this.deps.store.read.createQueryBuilder(StaticAddressEntity, 's').where('s.account_id = :accountId', { accountId });
    if (f.status !== undefined) qb.andWhere('s.status = :status', { status: f.status });
    if (f.coin_id !== undefined) qb.andWhere('s.coin_id = :coinId', { coinId: f.coin_id });
    if (f.customer_id !== undefined) qb.andWhere('s.customer_id = :customerId', { customerId: f.customer_id });
    const cols = ['address', 'customer_id', 'label'];
    const holds = `(${cols.map((c) => `instr(s.${c}, :sText) > 0`).join(' OR ')})`;
    switch (plan.kind) {
      case 'none':
        break;
      case 'prefix': {
        // The exact prefix test keeps the match right whatever the collation's order.
        const prefix = (c: string) => `(s.account_id = :accountId AND s.${c} >= :sFrom AND s.${c} < :sTo AND substr(s.${c}, 1, :sLen) = :sFrom)`;
        qb.andWhere(`(${cols.map(prefix).join(' OR ')})`, { sFrom: plan.text, sTo: `${plan.text}\uffff`, sLen: plan.text.length });
        break;
      }
      case 'like':
        qb.andWhere(`(${cols.map((c) => `s.${c} LIKE :sLike ESCAPE '\\'`).join(' OR ')})`, { sLike: likeAnywhere(plan.text) });
        break;
      case 'index':
        qb.andWhere('s.rowid IN (SELECT rowid FROM static_addresses_search WHERE static_addresses_search MATCH :sMatch)', { sMatch: phrase(plan.text) });
        break;
      case 'rows':
        qb.andWhere('s.rowid IN (SELECT value FROM json_each(:sRows))', { sRows: JSON.stringify(plan.rowids) });
        qb.andWhere(holds, { sText: plan.text });
        break;
      case 'scan':
        qb.andWhere(holds, { sText: plan.text });
        break;
    }
    return qb;
  }
}
