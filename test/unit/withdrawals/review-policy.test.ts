/**
 * A new withdrawal's first status (SPEC "POST /v1/withdrawals", PRODUCT §8), decided from exact
 * amounts: dual approval first, then a recent security change, the daily limit, the signer's cap.
 */
import test from 'ava';
import { reviewDecision, type ReviewCase } from '../../../src/withdrawals/review-policy';
import { Amount } from '../../../src/shared/amount';

const a = (v: string) => Amount.of(v);
const base: ReviewCase = {
  value: a('1000'),
  dualApprovalThreshold: null,
  recentSecurityChange: false,
  dailyLimit: null,
  dayValue: a('0'),
  signer: { value: a('1000'), cap: null },
};

test('with no rule tripped a withdrawal is pending', (t) => {
  t.deepEqual(reviewDecision(base), { status: 'pending', reviewReason: null });
});

test('above the dual-approval threshold it awaits a second approval, before any review rule; at the threshold it does not', (t) => {
  t.deepEqual(reviewDecision({ ...base, dualApprovalThreshold: a('999.99'), recentSecurityChange: true }), { status: 'awaiting_approval', reviewReason: null });
  t.deepEqual(reviewDecision({ ...base, dualApprovalThreshold: a('1000') }), { status: 'pending', reviewReason: null });
});

test('a security change in the last 24 hours sends it to review (pattern) before the daily limit and the signer cap', (t) => {
  t.deepEqual(reviewDecision({ ...base, recentSecurityChange: true, dailyLimit: a('1'), signer: { value: a('1000'), cap: a('1') } }), {
    status: 'review',
    reviewReason: 'pattern',
  });
});

test("the day's total with this one past the daily limit sends it to review (limit); exactly at the limit it passes, to the last decimal", (t) => {
  const limit = { ...base, dailyLimit: a('10000'), value: a('0.000000000000000001') };
  t.deepEqual(reviewDecision({ ...limit, dayValue: a('9999.999999999999999999') }), { status: 'pending', reviewReason: null });
  t.deepEqual(reviewDecision({ ...limit, dayValue: a('10000') }), { status: 'review', reviewReason: 'limit' });
});

test("above the signer's cap in the default fiat it goes to review (signer_limit); at the cap it is pending", (t) => {
  t.deepEqual(reviewDecision({ ...base, signer: { value: a('10000.01'), cap: a('10000') } }), { status: 'review', reviewReason: 'signer_limit' });
  t.deepEqual(reviewDecision({ ...base, signer: { value: a('10000'), cap: a('10000') } }), { status: 'pending', reviewReason: null });
});
