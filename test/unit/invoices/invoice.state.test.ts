import test from 'ava';
import { computeInvoiceState, isFinal, type InvoiceTerms, type TransferFact } from '../../../src/invoices/invoice.state';

const TTL = '2026-01-01T00:30:00.000Z';
const BEFORE_TTL = new Date('2026-01-01T00:10:00.000Z');
const AFTER_TTL = new Date('2026-01-01T00:40:00.000Z');

const terms = (over: Partial<InvoiceTerms> = {}): InvoiceTerms => ({
  payer_amount: '1.5',
  tolerance_percent: '0',
  ttl_expires_at: TTL,
  cancelled_at: null,
  ...over,
});
const seen = (amount: string, at = '2026-01-01T00:05:00.000Z'): TransferFact => ({ amount, status: 'seen', seen_at: at });
const confirmed = (amount: string, at = '2026-01-01T00:05:00.000Z'): TransferFact => ({ amount, status: 'confirmed', seen_at: at });
const reverted = (amount: string, at = '2026-01-01T00:05:00.000Z'): TransferFact => ({ amount, status: 'reverted', seen_at: at });
const LATE = '2026-01-01T00:35:00.000Z';

test('creation: a new invoice has received nothing', (t) => {
  const s = computeInvoiceState(terms(), [], BEFORE_TTL);
  t.deepEqual(s, { status: 'new', paid_amount: '0', remaining_amount: '1.5', overpaid_amount: '0', late_payment: false, expired_at: null });
});

test('new → pending: a transfer detected and waiting for confirmations', (t) => {
  const s = computeInvoiceState(terms(), [seen('1.5')], BEFORE_TTL);
  t.is(s.status, 'pending');
  t.is(s.paid_amount, '0');
});

test('pending → paid: the full amount confirmed', (t) => {
  const s = computeInvoiceState(terms(), [confirmed('1.5')], BEFORE_TTL);
  t.deepEqual(s, { status: 'paid', paid_amount: '1.5', remaining_amount: '0', overpaid_amount: '0', late_payment: false, expired_at: null });
});

test('pending → paid: a shortfall within the underpayment tolerance still counts as paid', (t) => {
  const s = computeInvoiceState(terms({ payer_amount: '100', tolerance_percent: '1.5' }), [confirmed('98.5')], BEFORE_TTL);
  t.is(s.status, 'paid');
  t.is(s.remaining_amount, '0');
  const short = computeInvoiceState(terms({ payer_amount: '100', tolerance_percent: '1.5' }), [confirmed('98.499999')], BEFORE_TTL);
  t.is(short.status, 'underpaid');
  t.is(short.remaining_amount, '1.500001');
});

test('pending → paid: an overpayment stays paid with overpaid_amount', (t) => {
  const s = computeInvoiceState(terms(), [confirmed('2.000000000000000001')], BEFORE_TTL);
  t.is(s.status, 'paid');
  t.is(s.overpaid_amount, '0.500000000000000001');
  t.is(s.paid_amount, '2.000000000000000001');
});

test('pending → underpaid: less than the amount confirmed, remaining_amount says what is missing', (t) => {
  const s = computeInvoiceState(terms(), [confirmed('1')], BEFORE_TTL);
  t.deepEqual(s, { status: 'underpaid', paid_amount: '1', remaining_amount: '0.5', overpaid_amount: '0', late_payment: false, expired_at: null });
  t.false(isFinal(s.status, TTL, BEFORE_TTL));
});

test('underpaid: a top-up before ttl_expires_at waits as pending, then pays the invoice', (t) => {
  const waiting = computeInvoiceState(terms(), [confirmed('1'), seen('0.5', '2026-01-01T00:20:00.000Z')], BEFORE_TTL);
  t.is(waiting.status, 'pending');
  const paid = computeInvoiceState(terms(), [confirmed('1'), confirmed('0.5', '2026-01-01T00:20:00.000Z')], AFTER_TTL);
  t.is(paid.status, 'paid');
  t.false(paid.late_payment);
});

test('underpaid after ttl_expires_at is final: a later top-up is a late payment and the status stays', (t) => {
  const s = computeInvoiceState(terms(), [confirmed('1'), confirmed('0.5', LATE)], AFTER_TTL);
  t.is(s.status, 'underpaid');
  t.true(s.late_payment);
  t.is(s.paid_amount, '1.5');
  t.true(isFinal('underpaid', TTL, AFTER_TTL));
});

test('new → expired: the TTL passes with nothing confirmed', (t) => {
  const s = computeInvoiceState(terms(), [], AFTER_TTL);
  t.deepEqual(s, { status: 'expired', paid_amount: '0', remaining_amount: '1.5', overpaid_amount: '0', late_payment: false, expired_at: TTL });
  const coinless = computeInvoiceState(terms({ payer_amount: null }), [], AFTER_TTL);
  t.is(coinless.status, 'expired');
  t.is(coinless.remaining_amount, '0');
});

test('a transfer seen in time keeps the invoice pending past the TTL until it confirms', (t) => {
  t.is(computeInvoiceState(terms(), [seen('1.5', '2026-01-01T00:29:59.000Z')], AFTER_TTL).status, 'pending');
  t.is(computeInvoiceState(terms(), [confirmed('1.5', '2026-01-01T00:29:59.000Z')], AFTER_TTL).status, 'paid');
});

test('new → cancelled: cancelled stays cancelled', (t) => {
  const s = computeInvoiceState(terms({ cancelled_at: '2026-01-01T00:01:00.000Z' }), [], BEFORE_TTL);
  t.is(s.status, 'cancelled');
  t.false(s.late_payment);
});

test('late payment on an expired invoice: same status, funds counted, late_payment true', (t) => {
  const waiting = computeInvoiceState(terms(), [seen('1.5', LATE)], AFTER_TTL);
  t.is(waiting.status, 'expired');
  t.false(waiting.late_payment);
  const s = computeInvoiceState(terms(), [confirmed('1.5', LATE)], AFTER_TTL);
  t.is(s.status, 'expired');
  t.true(s.late_payment);
  t.is(s.paid_amount, '1.5');
});

test('late payment on a cancelled invoice: same status, late_payment true', (t) => {
  const s = computeInvoiceState(terms({ cancelled_at: '2026-01-01T00:01:00.000Z' }), [confirmed('1.5', '2026-01-01T00:02:00.000Z')], BEFORE_TTL);
  t.is(s.status, 'cancelled');
  t.true(s.late_payment);
  t.is(s.paid_amount, '1.5');
});

test('funds after the TTL on a paid invoice are an overpayment, not a late payment', (t) => {
  const s = computeInvoiceState(terms(), [confirmed('1.5'), confirmed('0.1', LATE)], AFTER_TTL);
  t.is(s.status, 'paid');
  t.false(s.late_payment);
  t.is(s.overpaid_amount, '0.1');
});

test('two transfers: paid once their sum reaches the amount, pending while one still waits', (t) => {
  t.is(computeInvoiceState(terms(), [confirmed('1'), seen('0.5')], BEFORE_TTL).status, 'pending');
  t.is(computeInvoiceState(terms(), [confirmed('1'), confirmed('0.5')], BEFORE_TTL).status, 'paid');
});

test('revert recomputes: nothing left → new before the TTL, expired after it', (t) => {
  t.is(computeInvoiceState(terms(), [reverted('1.5')], BEFORE_TTL).status, 'new');
  const after = computeInvoiceState(terms(), [reverted('1.5')], AFTER_TTL);
  t.is(after.status, 'expired');
  t.is(after.paid_amount, '0');
});

test('revert recomputes: some left → pending or underpaid; enough left → paid', (t) => {
  t.is(computeInvoiceState(terms(), [reverted('1'), seen('0.5')], BEFORE_TTL).status, 'pending');
  t.is(computeInvoiceState(terms(), [reverted('1'), confirmed('0.5')], BEFORE_TTL).status, 'underpaid');
  t.is(computeInvoiceState(terms(), [reverted('0.1'), confirmed('1.5')], BEFORE_TTL).status, 'paid');
});

test('revert of a late payment clears late_payment', (t) => {
  const s = computeInvoiceState(terms(), [reverted('1.5', LATE)], AFTER_TTL);
  t.is(s.status, 'expired');
  t.false(s.late_payment);
});

test('paid, expired and cancelled are terminal; underpaid only after the TTL', (t) => {
  for (const s of ['paid', 'expired', 'cancelled'] as const) t.true(isFinal(s, TTL, BEFORE_TTL));
  t.false(isFinal('new', TTL, AFTER_TTL));
  t.false(isFinal('pending', TTL, AFTER_TTL));
});

test('underpaid, accepted by the merchant (PRODUCT §16): paid, nothing remaining; were every payment reverted it would not be', (t) => {
  const accepted = terms({ accepted: true });
  t.like(computeInvoiceState(accepted, [confirmed('1')], AFTER_TTL), { status: 'paid', paid_amount: '1', remaining_amount: '0', late_payment: false });
  t.like(computeInvoiceState(terms(), [confirmed('1')], AFTER_TTL), { status: 'underpaid', remaining_amount: '0.5' });
  t.is(computeInvoiceState(accepted, [reverted('1')], AFTER_TTL).status, 'expired');
  t.is(computeInvoiceState(accepted, [confirmed('1'), seen('0.2')], BEFORE_TTL).status, 'pending', 'a top-up on its way decides first');
});
