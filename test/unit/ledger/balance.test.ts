/**
 * The journal's arithmetic (ledger/balance.ts): every book is credit-normal; what may leave it is
 * what was credited less what was debited less what is held (SPEC "Balance": available and hold).
 */
import test from 'ava';
import { applyDelta, availableOf, deltasOf, holdOf, zeroSums, type EntryShape, type Sums } from '../../../src/ledger/balance';
import { Amount } from '../../../src/shared/amount';

const a = (s: string) => Amount.of(s);

/** The books' sums after `entries` (each with what its hold reserved, for a settlement). */
function run(entries: Array<[EntryShape, string?]>): Map<string, Sums> {
  const books = new Map<string, Sums>();
  for (const [e, reserved] of entries) {
    for (const d of deltasOf(e, reserved === undefined ? undefined : a(reserved))) {
      if (!books.has(d.book)) books.set(d.book, zeroSums());
      applyDelta(books.get(d.book)!, d.field, d.by);
    }
  }
  return books;
}
const view = (s: Sums) => ({ available: availableOf(s).toString(), hold: holdOf(s).toString() });
const posted = (debit: string, credit: string, amount: string): EntryShape => ({ kind: 'posted', debit_book: debit, credit_book: credit, amount: a(amount) });
const hold = (amount: string): EntryShape => ({ kind: 'pending', debit_book: 'account:acc', credit_book: 'external', amount: a(amount) });

test("a credit raises the merchant's available balance; the chains' external book goes below zero by what came in", (t) => {
  const books = run([[posted('external', 'account:acc', '2')]]);
  t.deepEqual(view(books.get('account:acc')!), { available: '2', hold: '0' });
  t.deepEqual(view(books.get('external')!), { available: '-2', hold: '0' });
});

test('a withdrawal moves its total_debit from available to hold; completed, it leaves the book; failed, it returns to available', (t) => {
  const credited = posted('external', 'account:acc', '5');
  t.deepEqual(view(run([[credited], [hold('2')]]).get('account:acc')!), { available: '3', hold: '2' });
  const settle: EntryShape = { kind: 'post_pending', debit_book: 'account:acc', credit_book: 'external', amount: a('2') };
  t.deepEqual(view(run([[credited], [hold('2')], [settle, '2']]).get('account:acc')!), { available: '3', hold: '0' });
  const release: EntryShape = { kind: 'void_pending', debit_book: 'account:acc', credit_book: 'external', amount: a('2') };
  t.deepEqual(view(run([[credited], [hold('2')], [release, '2']]).get('account:acc')!), { available: '5', hold: '0' });
});

test('actual-fee mode: a settlement posting less than the hold returns the unused reservation to available', (t) => {
  const part: EntryShape = { kind: 'post_pending', debit_book: 'account:acc', credit_book: 'network', amount: a('0.3') };
  t.deepEqual(view(run([[posted('external', 'account:acc', '1')], [hold('0.5')], [part, '0.5']]).get('account:acc')!), { available: '0.7', hold: '0' });
});

test('the books of a coin always sum to zero, whatever moved', (t) => {
  const books = run([
    [posted('external', 'account:acc', '10')],
    [posted('external', 'fees', '0.1')],
    [hold('4')],
    [{ kind: 'post_pending', debit_book: 'account:acc', credit_book: 'external', amount: a('3') }, '4'],
    [posted('account:acc', 'network', '0.2')],
    [posted('network', 'external', '0.15')],
  ]);
  let total = Amount.zero();
  for (const s of books.values()) total = total.plus(s.credits_posted.minus(s.debits_posted));
  t.true(total.isZero());
});

test('a settlement without the amount its hold reserved is refused', (t) => {
  t.throws(() => deltasOf({ kind: 'void_pending', debit_book: 'a', credit_book: 'b', amount: a('1') }), {
    message: /needs the amount its pending entry reserved/,
  });
});
