/**
 * Cold storage's pure decision (PRODUCT §18, issue 36 §2): whether a rule forwards now, and how
 * much, so that `keep` stays available once the forward's whole debit (its fees too) is taken.
 */
import test from 'ava';
import { CLOSED_FORWARD, forwardDecision, forwardPayoutId, sumAmounts, type ForwardCase } from '../../../src/custody/custody-decision';
import { Amount } from '../../../src/shared/amount';
import { largestPayable, type WithdrawalFees } from '../../../src/withdrawals/withdraw-all';
import { isCancellable, WITHDRAWAL_STATUSES } from '../../../src/withdrawals/withdrawal.state';

const a = (s: string) => Amount.of(s);
const open: ForwardCase = { available: a('1.5'), keep: a('1'), frozen: false, unverified: false, waiting: false, openForward: false };

test('above keep, the budget is exactly the excess of available over keep', (t) => {
  const d = forwardDecision(open);
  t.true(d.forward);
  if (d.forward) t.is(d.budget.toString(), '0.5');
  const tiny = forwardDecision({ ...open, available: a('1.00000001') });
  t.true(tiny.forward && tiny.budget.eq(a('0.00000001')));
  const all = forwardDecision({ ...open, keep: a('0') });
  t.true(all.forward && all.budget.eq(a('1.5')));
});

test('at or under keep nothing is forwarded', (t) => {
  t.deepEqual(forwardDecision({ ...open, available: a('1') }), { forward: false, reason: 'within_keep' });
  t.deepEqual(forwardDecision({ ...open, available: a('0.3') }), { forward: false, reason: 'within_keep' });
  t.deepEqual(forwardDecision({ ...open, available: a('0'), keep: a('0') }), { forward: false, reason: 'within_keep' });
});

test('a frozen or unverified account, an address inside the window, or a forward on its way forwards nothing, whatever the excess', (t) => {
  t.deepEqual(forwardDecision({ ...open, frozen: true }), { forward: false, reason: 'frozen' });
  t.deepEqual(forwardDecision({ ...open, unverified: true }), { forward: false, reason: 'unverified' });
  t.deepEqual(forwardDecision({ ...open, waiting: true }), { forward: false, reason: 'waiting' });
  t.deepEqual(forwardDecision({ ...open, openForward: true }), { forward: false, reason: 'open_forward' });
  // Frozen is said first: it is what the operator must undo.
  t.deepEqual(forwardDecision({ ...open, frozen: true, waiting: true, openForward: true }), { forward: false, reason: 'frozen' });
});

test('the amount forwarded leaves keep available after the platform and network fees; one base unit more would not', async (t) => {
  const cases: Array<[available: string, keep: string, percent: string, network: string]> = [
    ['1.5', '1', '0', '0.0001'],
    ['1.5', '1', '1', '0.0001'],
    ['0.12345678', '0.1', '2.5', '0.00000141'],
    ['2', '0', '0.3', '0.00021'],
  ];
  for (const [available, keep, percent, network] of cases) {
    const d = forwardDecision({ ...open, available: a(available), keep: a(keep) });
    if (!d.forward) return t.fail(`${available}: no forward`);
    const feesOf = async (amount: Amount): Promise<WithdrawalFees> => {
      const platformFee = amount.percent(percent, 8, 'up');
      return { platformFee, networkFee: a(network), total: amount.plus(platformFee).plus(a(network)) };
    };
    const found = await largestPayable({ available: d.budget, decimals: 8, minimum: a('0.00000546'), platformFee: (x) => x.percent(percent, 8, 'up'), feesOf });
    if (!found) return t.fail(`${available}: nothing payable`);
    const left = a(available).minus(found.fees.total);
    t.true(left.cmp(a(keep)) >= 0, `${available} keep ${keep}: ${left.toString()} left`);
    const more = await feesOf(found.amount.plus(Amount.fromBaseUnits(1n, 8)));
    t.true(a(available).minus(more.total).cmp(a(keep)) < 0, `${available}: one base unit more still fits`);
  }
});

test('an excess that cannot pay the least payment and its fee is not forwarded', async (t) => {
  const d = forwardDecision({ ...open, available: a('1.00001') });
  if (!d.forward) return t.fail();
  const feesOf = async (amount: Amount): Promise<WithdrawalFees> => ({ platformFee: a('0'), networkFee: a('0.00001'), total: amount.plus(a('0.00001')) });
  t.is(await largestPayable({ available: d.budget, decimals: 8, minimum: a('0.00000546'), platformFee: () => a('0'), feesOf }), null);
});

test('a forward is open until completed, failed, rejected or cancelled; one still cancellable is open', (t) => {
  for (const s of WITHDRAWAL_STATUSES) {
    if (isCancellable(s)) t.false((CLOSED_FORWARD as readonly string[]).includes(s), s);
  }
  t.deepEqual([...CLOSED_FORWARD].sort(), ['cancelled', 'completed', 'failed', 'rejected']);
});

test("a run's payout_id names the rule and the forward's number: two runs of the same forward name the same one", (t) => {
  t.is(forwardPayoutId('r1', 3), forwardPayoutId('r1', 3));
  t.not(forwardPayoutId('r1', 3), forwardPayoutId('r1', 4));
  t.not(forwardPayoutId('r1', 3), forwardPayoutId('r2', 3));
  t.true(forwardPayoutId('0192f3a4-0000-7000-8000-000000000000', 123456).length <= 128);
});

test('sums of amounts are exact', (t) => {
  t.is(sumAmounts(['0.1', '0.2', '0.00000001']).toString(), '0.30000001');
  t.is(sumAmounts([]).toString(), '0');
});
