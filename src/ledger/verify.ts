import { In, MoreThan, type EntityManager } from 'typeorm';
import { LedgerBalanceEntity, LedgerEntryEntity, type LedgerEntryRow } from '../db/entities/money';
import { Amount, isDecimalString } from '../shared/amount';
import { applyDelta, deltasOf, SUM_FIELDS, zeroSums, type Sums } from './balance';

export interface BalanceDifference {
  book: string;
  coin_id: string;
  field: string;
  /** What the journal sums to. */
  journal: string;
  /** What the cached balance row says (`missing` when there is no row). */
  cached: string;
}

export interface EntryProblem {
  entry_id: string;
  problem: string;
}

export interface VerifyReport {
  ok: boolean;
  entries: number;
  balances: number;
  differences: BalanceDifference[];
  problems: EntryProblem[];
}

const BATCH = 5000;
const KINDS = new Set(['posted', 'pending', 'post_pending', 'void_pending']);

/**
 * Recomputes every balance from the journal and compares it with the cached balances; also checks
 * each entry on its own (a positive amount, two books, a settlement that matches its hold, a
 * reversal that mirrors what it reverses) and that every coin's books sum to zero. Run it on a
 * snapshot (Store.snapshot): the journal and the balances must be read at one point in time.
 * The journal is read in batches; memory grows with the number of books and open holds only.
 */
export async function verifyLedger(em: EntityManager): Promise<VerifyReport> {
  const sums = new Map<string, { book: string; coin_id: string; sums: Sums }>();
  const holds = new Map<string, { coin_id: string; debit: string; credit: string; amount: Amount }>();
  const problems: EntryProblem[] = [];
  let entries = 0;
  let after = 0;

  const touch = (book: string, coin_id: string): Sums => {
    const k = `${book}\u0000${coin_id}`;
    let s = sums.get(k);
    if (!s) sums.set(k, (s = { book, coin_id, sums: zeroSums() }));
    return s.sums;
  };

  for (;;) {
    const batch = await em.find(LedgerEntryEntity, { where: { seq: MoreThan(after) }, order: { seq: 'ASC' }, take: BATCH });
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.seq;
    entries += batch.length;
    const reversals: LedgerEntryRow[] = [];
    for (const e of batch) {
      const problem = (p: string) => problems.push({ entry_id: e.id, problem: p });
      if (!isDecimalString(e.amount) || !Amount.of(e.amount).isPositive()) {
        problem(`amount ${JSON.stringify(e.amount)} is not a positive decimal`);
        continue;
      }
      if (!KINDS.has(e.kind)) {
        problem(`unknown kind ${JSON.stringify(e.kind)}`);
        continue;
      }
      if (e.debit_book === e.credit_book) problem('debits and credits the same book');
      const amount = Amount.of(e.amount);
      let reserved: Amount | undefined;
      if (e.kind === 'pending') holds.set(e.id, { coin_id: e.coin_id, debit: e.debit_book, credit: e.credit_book, amount });
      if (e.kind === 'post_pending' || e.kind === 'void_pending') {
        const hold = e.pending_id === null ? undefined : holds.get(e.pending_id);
        if (!hold || hold.coin_id !== e.coin_id || hold.debit !== e.debit_book || hold.credit !== e.credit_book) {
          problem(`settles ${e.pending_id ?? 'nothing'}, which is not an earlier open hold of the same books and coin`);
          continue;
        }
        if (e.kind === 'post_pending' ? amount.gt(hold.amount) : !amount.eq(hold.amount)) {
          problem(`${e.kind} of ${e.amount} does not fit the hold of ${hold.amount.toString()}`);
        }
        holds.delete(e.pending_id!);
        reserved = hold.amount;
      }
      if (e.reverses_id !== null) reversals.push(e);
      for (const d of deltasOf({ ...e, amount }, reserved)) applyDelta(touch(d.book, e.coin_id), d.field, d.by);
    }
    if (reversals.length > 0) {
      const originals = await em.find(LedgerEntryEntity, { where: { id: In(reversals.map((r) => r.reverses_id!)) } });
      for (const r of reversals) {
        const o = originals.find((x) => x.id === r.reverses_id);
        const mirrors =
          o !== undefined &&
          o.seq < r.seq &&
          r.kind === 'posted' &&
          (o.kind === 'posted' || o.kind === 'post_pending') &&
          o.coin_id === r.coin_id &&
          o.debit_book === r.credit_book &&
          o.credit_book === r.debit_book &&
          o.amount === r.amount;
        if (!mirrors) problems.push({ entry_id: r.id, problem: `does not mirror the earlier entry ${r.reverses_id} it reverses` });
      }
    }
  }

  const differences: BalanceDifference[] = [];
  const cached = await em.find(LedgerBalanceEntity, { order: { book: 'ASC', coin_id: 'ASC' } });
  const zeroPerCoin = new Map<string, Amount>();
  const cachedKeys = new Set(cached.map((r) => `${r.book}\u0000${r.coin_id}`));
  for (const row of cached) {
    const computed = touch(row.book, row.coin_id);
    for (const f of SUM_FIELDS) {
      const value = row[f];
      if (!isDecimalString(value) || !Amount.of(value).eq(computed[f])) {
        differences.push({ book: row.book, coin_id: row.coin_id, field: f, journal: computed[f].toString(), cached: String(value) });
      }
    }
    if (isDecimalString(row.credits_posted) && isDecimalString(row.debits_posted)) {
      const held = Amount.of(row.credits_posted).minus(Amount.of(row.debits_posted));
      zeroPerCoin.set(row.coin_id, (zeroPerCoin.get(row.coin_id) ?? Amount.zero()).plus(held));
    }
  }
  for (const [key, s] of sums) {
    if (cachedKeys.has(key)) continue;
    for (const f of SUM_FIELDS) {
      if (!s.sums[f].isZero()) differences.push({ book: s.book, coin_id: s.coin_id, field: f, journal: s.sums[f].toString(), cached: 'missing' });
    }
  }
  for (const [coin, total] of zeroPerCoin) {
    if (!total.isZero()) problems.push({ entry_id: '-', problem: `the cached books of coin ${coin} sum to ${total.toString()}, not 0` });
  }
  return { ok: differences.length === 0 && problems.length === 0, entries, balances: cached.length, differences, problems };
}
