import type { InvoiceRow } from '../db/entities/money';
import { conflict } from '../shared/errors';
import { Amount } from '../shared/amount';

/**
 * SPEC "POST /v1/invoices" rules 2–3, for a request with `idempotency_by_order_id` and an
 * `order_id`, given the order's invoices (newest first): an order that received funds is 409
 * `order_has_payment`; its open invoice (new, TTL not passed) is returned for the same amount and
 * currency, 409 `order_invoice_mismatch` otherwise; an order whose invoices all ended unpaid gets a
 * new one (null). Both conflicts name the invoice.
 */
export function orderRepeat<R extends Pick<InvoiceRow, 'id' | 'status' | 'paid_amount' | 'ttl_expires_at' | 'currency' | 'amount'>>(
  invoices: readonly R[],
  req: { currency: string; amount: Amount },
  now: Date,
): R | null {
  const funded = invoices.find((r) => Amount.of(r.paid_amount).isPositive() || r.status === 'pending' || r.status === 'paid' || r.status === 'underpaid');
  if (funded) throw conflict('this order has already received a payment', { reason: 'order_has_payment', invoice_id: funded.id });
  const open = invoices.find((r) => r.status === 'new' && Date.parse(r.ttl_expires_at) >= now.getTime());
  if (!open) return null;
  if (open.currency !== req.currency || !Amount.of(open.amount).eq(req.amount)) {
    throw conflict('this order has an open invoice with another amount', { reason: 'order_invoice_mismatch', invoice_id: open.id });
  }
  return open;
}
