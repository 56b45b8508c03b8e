import type { Catalog } from '../catalog/coins';
import { z } from 'zod';
import type { InvoiceRow } from '../db/entities/money';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';

/** The invoice as the API returns it (SPEC "Invoice (payment)"): every field, optional ones null. */
export const InvoiceSchema = z
  .object({
    id: uuid(),
    status: z.enum(['new', 'pending', 'paid', 'underpaid', 'expired', 'cancelled']),
    currency: z.string(),
    amount: decimal(),
    coin_id: uuid().nullable(),
    ticker: z.string().nullable(),
    network: z.string().nullable(),
    address: z.string().nullable(),
    amount_crypto: decimal().nullable(),
    payer_amount: decimal().nullable(),
    paid_amount: decimal(),
    remaining_amount: decimal(),
    overpaid_amount: decimal(),
    refunded_amount: decimal(),
    resolution: z.enum(['accepted_underpayment']).nullable(),
    amount_fiat: decimal().nullable(),
    fiat_currency: z.string().nullable(),
    rate_locked: decimal().nullable(),
    rate_locked_at: timestamp().nullable(),
    late_payment: z.boolean(),
    fee_paid_by: z.enum(['merchant', 'payer']),
    order_id: z.string().nullable(),
    description: z.string().nullable(),
    return_url: z.string().nullable(),
    webhook_url: z.string().nullable(),
    metadata: z.record(z.string(), z.string()).nullable(),
    allowed_coin_ids: z.array(uuid()).nullable(),
    checkout_url: z.string(),
    ttl_expires_at: timestamp(),
    expired_at: timestamp().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Invoice' });

export type InvoiceView = z.infer<typeof InvoiceSchema>;
const viewMatchesRow: Same<InvoiceView['status'] | InvoiceView['fee_paid_by'], InvoiceRow['status'] | InvoiceRow['fee_paid_by']> = true;
void viewMatchesRow;

/** Builds views of rows; one per daemon (it needs the catalogue and the public base URL). */
export class InvoicePresenter {
  constructor(
    private readonly catalog: Catalog,
    private readonly baseUrl: string,
  ) {}

  present = (r: InvoiceRow): InvoiceView => {
    const coin = r.coin_id ? this.catalog.coin(r.coin_id) : undefined;
    return {
      id: r.id,
      status: r.status,
      currency: r.currency,
      amount: r.amount,
      coin_id: r.coin_id,
      ticker: coin?.ticker ?? null,
      network: coin?.network ?? null,
      address: r.address,
      amount_crypto: r.amount_crypto,
      payer_amount: r.payer_amount,
      paid_amount: r.paid_amount,
      remaining_amount: r.remaining_amount,
      overpaid_amount: r.overpaid_amount,
      refunded_amount: r.refunded_amount ?? '0',
      resolution: r.resolution ?? null,
      amount_fiat: r.amount_fiat,
      fiat_currency: r.fiat_currency,
      rate_locked: r.rate_locked,
      rate_locked_at: r.rate_locked_at,
      // SQLite hands booleans back as 0/1.
      late_payment: Boolean(r.late_payment),
      fee_paid_by: r.fee_paid_by,
      order_id: r.order_id,
      description: r.description,
      return_url: r.return_url,
      webhook_url: r.webhook_url,
      metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as Record<string, string>),
      allowed_coin_ids: r.allowed_coin_ids === null ? null : (JSON.parse(r.allowed_coin_ids) as string[]),
      checkout_url: `${this.baseUrl}/pay/${r.id}`,
      ttl_expires_at: r.ttl_expires_at,
      expired_at: r.expired_at,
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  };
}
