/**
 * ARCHITECTURE "Ledger": an append-only journal; a hold is a pending transfer later posted or
 * voided; a posted entry is taken back by a reversal, once.
 */
import test from 'ava';
import type { LedgerEntryRow } from '../../../src/db/entities/money';
import { applyDelta, zeroSums, type Sums } from '../../../src/ledger/balance';
import { movementEntry, notAnOpenHold, overdrawn, reversalEntry, settlementEntry, type Movement } from '../../../src/ledger/entries';
import { Amount } from '../../../src/shared/amount';

const a = (s: string) => Amount.of(s);
const stamp = { id: 'e2', at: '2026-03-01T00:00:00.000Z' };
const move = (over: Partial<Movement> = {}): Movement => ({
  coinId: 'btc',
  debit: 'external',
  credit: 'account:acc',
  amount: a('1.5'),
  code: 'deposit',
  refId: 'tx1',
  ...over,
});
const row = (over: Partial<LedgerEntryRow> = {}): LedgerEntryRow => ({
  seq: 1,
  id: 'e1',
  coin_id: 'btc',
  debit_book: 'account:acc',
  credit_book: 'external',
  amount: '2',
  kind: 'pending',
  pending_id: null,
  reverses_id: null,
  code: 'withdrawal',
  ref_id: 'w-tx',
  created_at: '2026-02-01T00:00:00.000Z',
  ...over,
});

test('a movement is journalled between its two books with its code and the object it belongs to', (t) => {
  t.deepEqual(movementEntry(move(), 'posted', stamp), {
    id: 'e2',
    coin_id: 'btc',
    debit_book: 'external',
    credit_book: 'account:acc',
    amount: '1.5',
    kind: 'posted',
    pending_id: null,
    reverses_id: null,
    code: 'deposit',
    ref_id: 'tx1',
    created_at: stamp.at,
  });
  t.is(movementEntry(move({ refId: undefined }), 'pending', stamp).ref_id, null);
});

test('a movement of nothing, of a negative amount, or from a book to itself is refused', (t) => {
  t.throws(() => movementEntry(move({ amount: a('0') }), 'posted', stamp), { message: /must be positive, got 0/ });
  t.throws(() => movementEntry(move({ amount: a('-1') }), 'pending', stamp), { message: /must be positive/ });
  t.throws(() => movementEntry(move({ credit: 'external' }), 'posted', stamp), { message: /two different books, got external twice/ });
});

test('a hold is settled by posting all it reserved, or less (the rest is released), never more and never nothing', (t) => {
  const hold = row();
  t.like(settlementEntry(hold, 'post_pending', stamp).entry, {
    kind: 'post_pending',
    amount: '2',
    pending_id: 'e1',
    debit_book: 'account:acc',
    credit_book: 'external',
    code: 'withdrawal',
    ref_id: 'w-tx',
  });
  const part = settlementEntry(hold, 'post_pending', stamp, a('1.25'));
  t.is(part.entry.amount, '1.25');
  t.is(part.reserved.toString(), '2');
  t.throws(() => settlementEntry(hold, 'post_pending', stamp, a('2.01')), { message: /outside \(0, 2\]/ });
  t.throws(() => settlementEntry(hold, 'post_pending', stamp, a('0')), { message: /outside \(0, 2\]/ });
});

test('a voided hold releases what it reserved, whole', (t) => {
  const v = settlementEntry(row(), 'void_pending', stamp);
  t.like(v.entry, { kind: 'void_pending', amount: '2', pending_id: 'e1' });
  t.is(v.reserved.toString(), '2');
});

test('only a pending entry not settled yet can be settled: a hold is settled once', (t) => {
  t.is(notAnOpenHold('e1', row(), false), null);
  t.is(notAnOpenHold('e1', row(), true), 'pending transfer e1 is already settled');
  t.is(notAnOpenHold('e1', row({ kind: 'posted' }), false), 'ledger entry e1 is not a pending transfer');
  t.is(notAnOpenHold('e9', null, false), 'ledger entry e9 is not a pending transfer');
});

test("a posted entry is taken back by one in the other direction, pointing at it, under the reversal's own code", (t) => {
  const credit = row({ kind: 'posted', debit_book: 'external', credit_book: 'account:acc', amount: '1.5', code: 'invoice_payment', ref_id: 'tx1' });
  t.like(reversalEntry(credit, false, { code: 'adjustment', refId: 'adj1' }, stamp), {
    kind: 'posted',
    debit_book: 'account:acc',
    credit_book: 'external',
    amount: '1.5',
    code: 'adjustment',
    ref_id: 'adj1',
    reverses_id: 'e1',
  });
  t.like(reversalEntry(row({ kind: 'post_pending', pending_id: 'e0' }), false, { code: 'adjustment', refId: null }, stamp), {
    debit_book: 'external',
    credit_book: 'account:acc',
    reverses_id: 'e1',
  });
});

test('an entry is reversed at most once; a hold, a release or a reversal cannot be reversed', (t) => {
  const r = { code: 'adjustment', refId: null };
  t.throws(() => reversalEntry(row({ kind: 'posted' }), true, r, stamp), { message: 'ledger entry e1 is already reversed' });
  for (const kind of ['pending', 'void_pending'] as const)
    t.throws(() => reversalEntry(row({ kind }), false, r, stamp), { message: `ledger entry e1 (${kind}) cannot be reversed` });
  t.throws(() => reversalEntry(row({ kind: 'posted', reverses_id: 'e0' }), false, r, stamp), { message: /cannot be reversed/ });
});

test('holds that would take any debited book below zero available are told apart (insufficient_funds)', (t) => {
  const key = (book: string, coin: string) => `${book}/${coin}`;
  /** A book's sums once its holds were applied. */
  const after = (credited: string, held: string): Sums => {
    const s = zeroSums();
    applyDelta(s, 'credits_posted', a(credited));
    applyDelta(s, 'debits_pending', a(held));
    return s;
  };
  const holds = [move({ debit: 'account:acc', credit: 'external', amount: a('3') }), move({ debit: 'account:bob', credit: 'fees', amount: a('1') })];
  t.false(
    overdrawn(
      holds,
      new Map([
        ['account:acc/btc', after('3', '3')],
        ['account:bob/btc', after('1', '1')],
      ]),
      key,
    ),
    'exactly the available balance can be held',
  );
  t.true(
    overdrawn(
      holds,
      new Map([
        ['account:acc/btc', after('3', '3')],
        ['account:bob/btc', after('1', '1.00000001')],
      ]),
      key,
    ),
  );
});
