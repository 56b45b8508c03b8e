/** SPEC "POST /v1/invoices" rules 2–3: a repeated order with `idempotency_by_order_id`. */
import test from 'ava';
import type { InvoiceRow } from '../../../src/db/entities/money';
import { orderRepeat } from '../../../src/invoices/order-rule';
import { ApiError } from '../../../src/shared/errors';
import { Amount } from '../../../src/shared/amount';

type Row = Pick<InvoiceRow, 'id' | 'status' | 'paid_amount' | 'ttl_expires_at' | 'currency' | 'amount'>;
const NOW = new Date('2026-03-01T00:10:00.000Z');
const inv = (id: string, over: Partial<Row> = {}): Row => ({
  id,
  status: 'new',
  paid_amount: '0',
  ttl_expires_at: '2026-03-01T00:30:00.000Z',
  currency: 'USD',
  amount: '10',
  ...over,
});
const req = { currency: 'USD', amount: Amount.of('10.00') };

const refused = (t: import('ava').ExecutionContext, rows: Row[], reason: string, invoiceId: string) => {
  const err = t.throws(() => orderRepeat(rows, req, NOW), { instanceOf: ApiError }) as ApiError;
  t.is(err.status, 409);
  t.like(err.details, { reason, invoice_id: invoiceId });
};

test('a repeated order returns its open invoice (rule 2), the same amount however it is written', (t) => {
  const open = inv('i1');
  t.is(orderRepeat([open], req, NOW), open);
});

test('an order whose invoices all ended unpaid gets a new one; so does a first order', (t) => {
  t.is(orderRepeat([], req, NOW), null);
  t.is(orderRepeat([inv('i1', { status: 'expired' }), inv('i2', { status: 'cancelled' })], req, NOW), null);
  t.is(orderRepeat([inv('i1', { ttl_expires_at: '2026-03-01T00:05:00.000Z' })], req, NOW), null, 'new, but its TTL passed: not open');
});

test('the same order with another amount or currency is 409 order_invoice_mismatch naming the open invoice (rule 3)', (t) => {
  refused(t, [inv('i1', { amount: '11' })], 'order_invoice_mismatch', 'i1');
  refused(t, [inv('i1', { currency: 'EUR' })], 'order_invoice_mismatch', 'i1');
});

test('an order that received funds is 409 order_has_payment naming that invoice, even beside an open one (rule 3)', (t) => {
  for (const status of ['pending', 'paid', 'underpaid'] as const) refused(t, [inv('open'), inv('funded', { status })], 'order_has_payment', 'funded');
  refused(t, [inv('late', { status: 'expired', paid_amount: '0.001' })], 'order_has_payment', 'late');
});
