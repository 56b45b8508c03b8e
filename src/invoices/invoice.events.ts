import type { ChainTransferRow, TransferStatus } from '../db/entities/chain';
import type { InvoiceRow, InvoiceStatus } from '../db/entities/money';
import type { EventType } from '../shared/events';
import { isInTime, termsOf, type InvoiceState } from './invoice.state';

/** What set off a recomputation: a transfer's status change, or the clock (expiry). */
export type RecomputeCause = { transfer: ChainTransferRow; previous: TransferStatus | null } | null;

/** Statuses whose arrival is announced by the event of the same name (PRODUCT §10). */
const STATUS_EVENTS: Partial<Record<InvoiceStatus, EventType>> = {
  pending: 'invoice.pending',
  paid: 'invoice.paid',
  underpaid: 'invoice.underpaid',
  expired: 'invoice.expired',
};

/** Whether a recomputed state differs from the stored row in anything the invoice shows. */
export function stateChanged(row: InvoiceRow, state: InvoiceState): boolean {
  return (
    state.status !== row.status ||
    state.paid_amount !== row.paid_amount ||
    state.remaining_amount !== row.remaining_amount ||
    state.overpaid_amount !== row.overpaid_amount ||
    state.late_payment !== Boolean(row.late_payment) ||
    state.expired_at !== row.expired_at
  );
}

/**
 * The events a recomputation sends (SPEC "States and transitions: Invoice"): a new status its
 * event; a reverted transfer one `invoice.reverted`, whatever the status becomes (when it had been
 * confirmed, or the status moved); a transfer of the invoice's coin confirmed after its time on an
 * invoice marked late `invoice.late_payment`.
 */
export function invoiceEvents(before: InvoiceRow, after: InvoiceRow, cause: RecomputeCause): EventType[] {
  const out: EventType[] = [];
  if (cause?.transfer.status === 'reverted') {
    if (cause.previous === 'confirmed' || after.status !== before.status) out.push('invoice.reverted');
  } else if (after.status !== before.status) {
    const type = STATUS_EVENTS[after.status];
    if (type) out.push(type);
  }
  const lateConfirmation =
    cause !== null && cause.transfer.status === 'confirmed' && cause.transfer.coin_id === after.coin_id && !isInTime(termsOf(after), cause.transfer.seen_at);
  if (lateConfirmation && after.late_payment) out.push('invoice.late_payment');
  return out;
}
