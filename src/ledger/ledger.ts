import type { EntityManager } from 'typeorm';
import { LedgerBalanceEntity, LedgerEntryEntity, type LedgerBalanceRow, type LedgerEntryRow } from '../db/entities/money';
import { insertRows, placeholder, rawQuery } from '../db/raw';
import { scoped } from '../db/tx-scope';
import { iso, type Clock } from '../shared/clock';
import { conflict } from '../shared/errors';
import { newTimeOrderedId } from '../shared/ids';
import { Amount } from '../shared/amount';
import { applyDelta, availableOf, deltasOf, holdOf, SUM_FIELDS, zeroSums, type Sums } from './balance';
import { movementEntry, notAnOpenHold, overdrawn, reversalEntry, settlementEntry, type LedgerEntry, type Movement, type Stamp } from './entries';

export type { LedgerEntry, Movement } from './entries';

/** The operator's book: every platform fee is credited here. */
export const FEE_BOOK = 'fees';
/** The chains' side of every incoming and outgoing movement: its balance is minus what the books hold. */
export const EXTERNAL_BOOK = 'external';
/** The operator's book of network fees: what merchants are charged for payouts, less what the chains took. */
export const NETWORK_BOOK = 'network';
/** A merchant account's book. */
export const accountBook = (accountId: string): string => `account:${accountId}`;

export interface BookBalance {
  book: string;
  coin_id: string;
  available: Amount;
  hold: Amount;
}

interface Draft {
  entry: LedgerEntry;
  /** For post_pending / void_pending: what the pending entry reserved. */
  reserved?: Amount;
}

const keyOf = (book: string, coinId: string): string => `${book}\u0000${coinId}`;

const sumsOf = (row: LedgerBalanceRow): Sums => ({
  debits_posted: Amount.of(row.debits_posted),
  credits_posted: Amount.of(row.credits_posted),
  debits_pending: Amount.of(row.debits_pending),
  credits_pending: Amount.of(row.credits_pending),
});

/**
 * The append-only journal (ARCHITECTURE "Ledger"). Every method takes the EntityManager of the
 * caller's write transaction: the entries, the cached balances they change and the caller's own
 * state change commit together or not at all. Balances are cached only here, in the transaction
 * that appends; `verifyLedger` recomputes them from the journal. An append's statements are plain
 * prepared SQL: every confirmed payment appends inside the chain core's transaction.
 *
 * On PostgreSQL the balance rows an append touches are locked in one sorted order (no deadlock
 * between two appends); on SQLite the store's write lock already serialises every append.
 */
export class Ledger {
  constructor(private readonly clock: Clock) {}

  /** Moves money now; several movements append together (a credit and its fee). */
  async post(em: EntityManager, movements: Movement[]): Promise<LedgerEntry[]> {
    return this.append(
      em,
      movements.map((m) => ({ entry: movementEntry(m, 'posted', this.stamp()) })),
    );
  }

  /**
   * Reserves money as a pending transfer (a hold): it leaves the debit book's `available` for its
   * `hold` until posted or voided. With `ensureFunds`, a hold larger than `available` is refused
   * with 409 `conflict`, reason `insufficient_funds`, and nothing is appended.
   */
  async hold(em: EntityManager, m: Movement & { ensureFunds?: boolean }): Promise<LedgerEntry> {
    const [entry] = await this.holdAll(em, [m], m.ensureFunds ?? false);
    return entry!;
  }

  /**
   * Several holds appended together (a withdrawal's amount and fees): with `ensureFunds`, refused
   * with `insufficient_funds` and nothing appended when any debited book's `available` would go
   * below zero.
   */
  async holdAll(em: EntityManager, ms: Movement[], ensureFunds: boolean): Promise<LedgerEntry[]> {
    return this.append(
      em,
      ms.map((m) => ({ entry: movementEntry(m, 'pending', this.stamp()) })),
      (sums) => {
        if (ensureFunds && overdrawn(ms, sums, keyOf)) throw conflict('the available balance is too small', { reason: 'insufficient_funds' });
      },
    );
  }

  /** Settles a hold: posts `amount` (default: all of it, at most all of it) and releases the rest. */
  async postPending(em: EntityManager, pendingId: string, amount?: Amount): Promise<LedgerEntry> {
    const pending = await this.openPending(em, pendingId);
    const [entry] = await this.append(em, [settlementEntry(pending, 'post_pending', this.stamp(), amount)]);
    return entry!;
  }

  /** Releases a hold whole. */
  async voidPending(em: EntityManager, pendingId: string): Promise<LedgerEntry> {
    const pending = await this.openPending(em, pendingId);
    const [entry] = await this.append(em, [settlementEntry(pending, 'void_pending', this.stamp())]);
    return entry!;
  }

  /**
   * Takes posted entries back with entries in the other direction, whatever the balances become
   * (a merchant's book may go below zero). Each entry is reversed at most once.
   */
  async reverse(em: EntityManager, entryIds: string[], code: string, refId: string | null): Promise<LedgerEntry[]> {
    const drafts: Draft[] = [];
    for (const id of entryIds) {
      const e = await em.findOneBy(LedgerEntryEntity, { id });
      if (!e) throw new Error(`ledger entry ${id} does not exist`);
      drafts.push({ entry: reversalEntry(e, await em.existsBy(LedgerEntryEntity, { reverses_id: id }), { code, refId }, this.stamp()) });
    }
    return this.append(em, drafts);
  }

  async balance(em: EntityManager, book: string, coinId: string): Promise<BookBalance> {
    const row = await em.findOneBy(LedgerBalanceEntity, { book, coin_id: coinId });
    const sums = row ? sumsOf(row) : zeroSums();
    return { book, coin_id: coinId, available: availableOf(sums), hold: holdOf(sums) };
  }

  /** Every coin the book has a balance row for. */
  async balances(em: EntityManager, book: string): Promise<BookBalance[]> {
    const rows = await em.find(LedgerBalanceEntity, { where: { book }, order: { coin_id: 'ASC' } });
    return rows.map((r) => {
      const s = sumsOf(r);
      return { book, coin_id: r.coin_id, available: availableOf(s), hold: holdOf(s) };
    });
  }

  /** A new entry's identity: time-ordered, so every append lands at the end of the id index, not on a random page of it. */
  private stamp(): Stamp {
    const at = this.clock.now();
    return { id: newTimeOrderedId(at.getTime()), at: iso(at) };
  }

  private async openPending(em: EntityManager, pendingId: string): Promise<LedgerEntryRow> {
    const pending = await em.findOneBy(LedgerEntryEntity, { id: pendingId });
    const problem = notAnOpenHold(pendingId, pending, pending?.kind === 'pending' && (await em.existsBy(LedgerEntryEntity, { pending_id: pendingId })));
    if (problem) throw new Error(problem);
    return pending!;
  }

  /**
   * Locks (PostgreSQL) and loads the balance rows the drafts touch, applies every draft's deltas,
   * lets `check` refuse the result, then writes the entries and the new sums.
   */
  private async append(em: EntityManager, drafts: Draft[], check?: (sums: Map<string, Sums>) => void): Promise<LedgerEntry[]> {
    if (drafts.length === 0) return [];
    const touched = new Map<string, { book: string; coin_id: string }>();
    for (const { entry } of drafts) {
      for (const book of [entry.debit_book, entry.credit_book]) touched.set(keyOf(book, entry.coin_id), { book, coin_id: entry.coin_id });
    }
    const keys = [...touched.values()];
    const now = iso(this.clock.now());
    const rows = await this.lockBalances(em, keys, now);
    const sums = new Map<string, Sums>();
    for (const r of rows) sums.set(keyOf(r.book, r.coin_id), sumsOf(r));
    for (const { entry, reserved } of drafts) {
      for (const d of deltasOf({ ...entry, amount: Amount.of(entry.amount) }, reserved)) applyDelta(sums.get(keyOf(d.book, entry.coin_id))!, d.field, d.by);
    }
    check?.(sums);
    // The entries in one statement, the new sums of every touched balance in another.
    await insertRows(
      em,
      'ledger_entries',
      drafts.map((d) => d.entry),
    );
    const written = keys.map((k) => {
      const s = sums.get(keyOf(k.book, k.coin_id))!;
      const row: LedgerBalanceRow = {
        book: k.book,
        coin_id: k.coin_id,
        debits_posted: '',
        credits_posted: '',
        debits_pending: '',
        credits_pending: '',
        updated_at: now,
      };
      for (const f of SUM_FIELDS) row[f] = s[f].toString();
      return row;
    });
    await insertRows(em, 'ledger_balances', written, { upsertOn: ['book', 'coin_id'] });
    const kept = keptBalances(em);
    if (kept) for (const row of written) kept.set(keyOf(row.book, row.coin_id), row);
    return drafts.map((d) => d.entry);
  }

  private async lockBalances(em: EntityManager, keys: Array<{ book: string; coin_id: string }>, now: string): Promise<LedgerBalanceRow[]> {
    const fresh = (k: { book: string; coin_id: string }): LedgerBalanceRow => ({
      ...k,
      debits_posted: '0',
      credits_posted: '0',
      debits_pending: '0',
      credits_pending: '0',
      updated_at: now,
    });
    const matching = (ks: typeof keys) => ({
      sql: ks.map((_, i) => `(book = ${placeholder(em, 2 * i + 1)} AND coin_id = ${placeholder(em, 2 * i + 2)})`).join(' OR '),
      params: ks.flatMap((k) => [k.book, k.coin_id]),
    });
    if (em.connection.options.type !== 'postgres') {
      // The rows an earlier append of this transaction wrote are kept (tx-scope): the appends of a
      // group commit's jobs touch the same books one after another. Only the others are read.
      const kept = keptBalances(em);
      const missing = kept ? keys.filter((k) => !kept.has(keyOf(k.book, k.coin_id))) : keys;
      if (missing.length === 0) return keys.map((k) => kept!.get(keyOf(k.book, k.coin_id))!);
      const m = matching(missing);
      const rows = await rawQuery<LedgerBalanceRow>(em, `SELECT * FROM ledger_balances WHERE ${m.sql}`, m.params);
      // A missing row starts at zero; the append's upsert creates it.
      const found = [...rows, ...missing.filter((k) => !rows.some((r) => r.book === k.book && r.coin_id === k.coin_id)).map(fresh)];
      if (!kept) return found;
      for (const r of found) kept.set(keyOf(r.book, r.coin_id), r);
      return keys.map((k) => kept.get(keyOf(k.book, k.coin_id))!);
    }
    // A concurrent first append may insert the same row: ignore the clash, then lock what exists.
    const m = matching(keys);
    await em.createQueryBuilder().insert().into(LedgerBalanceEntity).values(keys.map(fresh)).orIgnore().execute();
    return rawQuery<LedgerBalanceRow>(em, `SELECT * FROM ledger_balances WHERE ${m.sql} ORDER BY book, coin_id FOR UPDATE`, m.params);
  }
}

/** The balance rows kept for the transaction of `em` (tx-scope), by keyOf(book, coin); null when none are kept. */
const KEPT_BALANCES = {};
const keptBalances = (em: EntityManager): Map<string, LedgerBalanceRow> | null => scoped(em, KEPT_BALANCES, () => new Map<string, LedgerBalanceRow>());
