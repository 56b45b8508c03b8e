import type { ExportColumn } from '../http/export';
import type { InvoiceView } from './invoice.view';

/** Every field of the invoice as GET returns it, in the same order (SPEC "Invoice (payment)"). */
const FIELDS = [
  'id', 'status', 'currency', 'amount', 'coin_id', 'ticker', 'network', 'address', 'amount_crypto', 'payer_amount',
  'paid_amount', 'remaining_amount', 'overpaid_amount', 'amount_fiat', 'fiat_currency', 'rate_locked', 'rate_locked_at',
  'late_payment', 'fee_paid_by', 'order_id', 'description', 'return_url', 'webhook_url', 'metadata', 'allowed_coin_ids',
  'checkout_url', 'ttl_expires_at', 'expired_at', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof InvoiceView>;

/** The columns of an invoice export: one per field; metadata and allowed_coin_ids as their JSON. */
export const INVOICE_COLUMNS: readonly ExportColumn<InvoiceView>[] = FIELDS.map((k) => ({ header: k, value: (v: InvoiceView) => v[k] }));
