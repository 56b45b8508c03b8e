import type { LedgerEntryKind } from '../db/entities/money';
import { Amount } from '../shared/amount';

/**
 * The arithmetic of the journal, pure: what one entry does to the sums of the books it names. The
 * ledger applies it when it appends, and `verify` applies it again to the whole journal, so the
 * cached sums and the recomputed ones come from the same rule.
 *
 * Every book is credit-normal: what a book holds is credits − debits. A merchant's book is credited
 * by incoming payments and debited by withdrawals; the `external` book (the chains) goes negative by
 * what came in, so the sums of all books of a coin are always zero.
 */
export interface Sums {
  debits_posted: Amount;
  credits_posted: Amount;
  debits_pending: Amount;
  credits_pending: Amount;
}

export type SumField = keyof Sums;
export const SUM_FIELDS: readonly SumField[] = ['debits_posted', 'credits_posted', 'debits_pending', 'credits_pending'];

export const zeroSums = (): Sums => ({
  debits_posted: Amount.zero(),
  credits_posted: Amount.zero(),
  debits_pending: Amount.zero(),
  credits_pending: Amount.zero(),
});

/** What may leave the book now: posted credits less posted debits less what is held. */
export const availableOf = (s: Sums): Amount => s.credits_posted.minus(s.debits_posted).minus(s.debits_pending);

/** Reserved by pending debits (holds), not yet posted or voided. */
export const holdOf = (s: Sums): Amount => s.debits_pending;

export interface Delta {
  book: string;
  field: SumField;
  by: Amount;
}

export interface EntryShape {
  kind: LedgerEntryKind;
  debit_book: string;
  credit_book: string;
  amount: Amount;
}

/**
 * The changes one entry makes. A post_pending or void_pending needs the amount its pending entry
 * reserved (`reserved`): settling releases all of it and posts `amount` (≤ reserved).
 */
export function deltasOf(e: EntryShape, reserved?: Amount): Delta[] {
  const d = (book: string, field: SumField, by: Amount): Delta => ({ book, field, by });
  switch (e.kind) {
    case 'posted':
      return [d(e.debit_book, 'debits_posted', e.amount), d(e.credit_book, 'credits_posted', e.amount)];
    case 'pending':
      return [d(e.debit_book, 'debits_pending', e.amount), d(e.credit_book, 'credits_pending', e.amount)];
    case 'post_pending':
    case 'void_pending': {
      if (!reserved) throw new Error(`${e.kind} needs the amount its pending entry reserved`);
      const release = Amount.zero().minus(reserved);
      const out = [d(e.debit_book, 'debits_pending', release), d(e.credit_book, 'credits_pending', release)];
      if (e.kind === 'post_pending') out.push(d(e.debit_book, 'debits_posted', e.amount), d(e.credit_book, 'credits_posted', e.amount));
      return out;
    }
  }
}

export function applyDelta(s: Sums, field: SumField, by: Amount): void {
  s[field] = s[field].plus(by);
}
