import type { Catalog } from '../catalog/coins';
import type { InvoiceRow } from '../db/entities/money';

/** The invoice as the API returns it (SPEC "Invoice (payment)"): every field, optional ones null. */
export interface InvoiceView {
  id: string;
  status: InvoiceRow['status'];
  currency: string;
  amount: string;
  coin_id: string | null;
  ticker: string | null;
  network: string | null;
  address: string | null;
  amount_crypto: string | null;
  payer_amount: string | null;
  paid_amount: string;
  remaining_amount: string;
  overpaid_amount: string;
  amount_fiat: string | null;
  fiat_currency: string | null;
  rate_locked: string | null;
  rate_locked_at: string | null;
  late_payment: boolean;
  fee_paid_by: InvoiceRow['fee_paid_by'];
  order_id: string | null;
  description: string | null;
  return_url: string | null;
  webhook_url: string | null;
  metadata: Record<string, string> | null;
  allowed_coin_ids: string[] | null;
  checkout_url: string;
  ttl_expires_at: string;
  expired_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Builds views of rows; one per daemon (it needs the catalogue and the public base URL). */
export class InvoicePresenter {
  constructor(private readonly catalog: Catalog, private readonly baseUrl: string) {}

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
