import { z } from 'zod';
import type { Catalog } from '../catalog/coins';
import type { RefundRow } from '../db/entities/refund';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';
import { REFUND_STATUSES } from './refund.state';

/** A refund as the API shows it (PRODUCT §16). */
export const RefundSchema = z
  .object({
    id: uuid(),
    status: z.enum(REFUND_STATUSES),
    refund_id: z.string().nullable(),
    invoice_id: uuid().nullable(),
    transaction_id: uuid().nullable(),
    coin_id: uuid(),
    ticker: z.string().nullable(),
    network: z.string().nullable(),
    amount: decimal(),
    to_address: z.string().nullable(),
    refund_url: z.string().nullable().meta({ description: 'the payer link, while the refund waits for its address' }),
    network_fee_paid_by: z.enum(['merchant', 'payer']),
    withdrawal_id: uuid().nullable(),
    txid: z.string().nullable(),
    failure_reason: z.string().nullable(),
    expires_at: timestamp().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Refund' });
export type RefundView = z.infer<typeof RefundSchema>;

const sameStatus: Same<RefundView['status'], RefundRow['status']> = true;
void sameStatus;

/** A refund row as shown, with its payer link when it has one. */
export function presentRefund(catalog: Catalog, r: RefundRow, refundUrl: string | null): RefundView {
  const coin = catalog.coin(r.coin_id);
  return {
    id: r.id,
    status: r.status,
    refund_id: r.refund_id,
    invoice_id: r.invoice_id,
    transaction_id: r.transaction_id,
    coin_id: r.coin_id,
    ticker: coin?.ticker ?? null,
    network: coin?.network ?? null,
    amount: r.amount,
    to_address: r.to_address,
    refund_url: refundUrl,
    network_fee_paid_by: r.network_fee_paid_by,
    withdrawal_id: r.withdrawal_id,
    txid: r.txid,
    failure_reason: r.failure_reason,
    expires_at: r.expires_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Why an invoice waits for the merchant's decision (PRODUCT §16): paid too much, too little for good, or after its time. */
export type RefundDecisionKind = 'overpaid' | 'underpaid' | 'late';

/** An invoice that needs a decision (the dashboard's Refunds screen), with what a refund of it could still take. */
export interface RefundDecision {
  kind: RefundDecisionKind;
  invoice_id: string;
  account_id: string;
  status: string;
  coin_id: string;
  ticker: string | null;
  paid_amount: string;
  overpaid_amount: string;
  refunded_amount: string;
  /** Overpaid: the excess not refunded yet; otherwise everything received less the refunds. */
  refundable: string;
  created_at: string;
}
