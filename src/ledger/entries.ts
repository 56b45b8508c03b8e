import type { LedgerEntryKind, LedgerEntryRow } from '../db/entities/money';
import { Amount } from '../shared/amount';
import { availableOf, type Sums } from './balance';

/**
 * The journal's entries as pure values (ARCHITECTURE "Ledger"), with the rules each obeys: a
 * movement between two books of a positive amount; a hold settled once, posting at most what it
 * reserved (the two-phase transfer of TigerBeetle); a posted entry reversed at most once, by one in
 * the other direction. The ledger gives each its id and time and appends it.
 */

export interface Movement {
  coinId: string;
  /** The book money leaves. */
  debit: string;
  /** The book money reaches. */
  credit: string;
  /** Positive. */
  amount: Amount;
  code: string;
  refId?: string | null;
}

/** A journal line as appended (its `seq` is the database's). */
export type LedgerEntry = Omit<LedgerEntryRow, 'seq'>;

/** An entry's identity: a time-ordered id and its creation time. */
export interface Stamp {
  id: string;
  at: string;
}

/** A movement as a `posted` entry (money moves now) or a `pending` one (a hold). Throws on a movement the journal cannot hold. */
export function movementEntry(m: Movement, kind: Extract<LedgerEntryKind, 'posted' | 'pending'>, s: Stamp): LedgerEntry {
  if (!m.amount.isPositive()) throw new Error(`a ledger movement must be positive, got ${m.amount.toString()}`);
  if (m.debit === m.credit) throw new Error(`a ledger movement needs two different books, got ${m.debit} twice`);
  return {
    id: s.id,
    coin_id: m.coinId,
    debit_book: m.debit,
    credit_book: m.credit,
    amount: m.amount.toString(),
    kind,
    pending_id: null,
    reverses_id: null,
    code: m.code,
    ref_id: m.refId ?? null,
    created_at: s.at,
  };
}

/** Why `entry` is not an open hold (`settled`: a settlement of it exists), or null when it is one. */
export function notAnOpenHold(id: string, entry: Pick<LedgerEntryRow, 'kind'> | null, settled: boolean): string | null {
  if (!entry || entry.kind !== 'pending') return `ledger entry ${id} is not a pending transfer`;
  return settled ? `pending transfer ${id} is already settled` : null;
}

/**
 * The settlement of an open hold: `post_pending` posts `amount` (default: all it reserved, never
 * more, never nothing) and releases the rest; `void_pending` releases it whole. The entry, and what
 * the hold reserved (the sums need it).
 */
export function settlementEntry(
  pending: LedgerEntryRow,
  kind: Extract<LedgerEntryKind, 'post_pending' | 'void_pending'>,
  s: Stamp,
  amount?: Amount,
): { entry: LedgerEntry; reserved: Amount } {
  const reserved = Amount.of(pending.amount);
  const posted = kind === 'post_pending' ? (amount ?? reserved) : reserved;
  if (!posted.isPositive() || posted.gt(reserved)) {
    throw new Error(`post of ${posted.toString()} outside (0, ${reserved.toString()}] for pending ${pending.id}`);
  }
  return {
    entry: {
      id: s.id,
      coin_id: pending.coin_id,
      debit_book: pending.debit_book,
      credit_book: pending.credit_book,
      amount: posted.toString(),
      kind,
      pending_id: pending.id,
      reverses_id: null,
      code: pending.code,
      ref_id: pending.ref_id,
      created_at: s.at,
    },
    reserved,
  };
}

/**
 * A posted entry taken back by one in the other direction (`reversed`: a reversal of it exists),
 * whatever the balances become. Throws for an entry that is not posted money, is itself a
 * reversal, or was reversed already.
 */
export function reversalEntry(e: LedgerEntryRow, reversed: boolean, r: { code: string; refId: string | null }, s: Stamp): LedgerEntry {
  if ((e.kind !== 'posted' && e.kind !== 'post_pending') || e.reverses_id !== null) throw new Error(`ledger entry ${e.id} (${e.kind}) cannot be reversed`);
  if (reversed) throw new Error(`ledger entry ${e.id} is already reversed`);
  const back = movementEntry(
    { coinId: e.coin_id, debit: e.credit_book, credit: e.debit_book, amount: Amount.of(e.amount), code: r.code, refId: r.refId },
    'posted',
    s,
  );
  return { ...back, reverses_id: e.id };
}

/** Whether holds of `ms` left any debited book below zero available, in `sums` after they were applied (keyed by `key`). */
export function overdrawn(ms: readonly Movement[], sums: ReadonlyMap<string, Sums>, key: (book: string, coinId: string) => string): boolean {
  return ms.some((m) => availableOf(sums.get(key(m.debit, m.coinId))!).isNegative());
}
