import { z } from 'zod';
import type { RefundFeePayer, RefundStatus } from '../db/entities/refund';
import { validationError } from '../shared/errors';
import { Amount } from '../shared/amount';
import { uuid } from '../shared/schema';

/** The body of POST /v1/refunds (PRODUCT §16): types and sizes; what it refunds and how much are checked after. */
export const CreateRefundBody = z.strictObject({
  invoice_id: uuid().nullish(),
  transaction_id: uuid().nullish().meta({ description: 'an incoming invoice_payment or deposit' }),
  amount: z
    .string()
    .min(1)
    .max(100)
    .meta({ description: 'decimal string; "all": everything received less earlier refunds; "excess": the invoice\'s overpaid amount' }),
  to_address: z.string().min(1).max(128).nullish(),
  refund_id: z
    .string()
    .regex(/^[\x20-\x7e]{1,128}$/)
    .nullish()
    .meta({ description: "the merchant's own id: the same values return the same refund" }),
  network_fee_paid_by: z.enum(['merchant', 'payer']).nullish(),
  comment: z.string().max(500).nullish(),
});
export type CreateRefundBodyShape = z.infer<typeof CreateRefundBody>;

/** The body of POST /v1/strays/{id}/refund: a refund of the whole stray payment, so no amount and no source. */
export const StrayRefundBody = CreateRefundBody.omit({ invoice_id: true, transaction_id: true, amount: true });

/** What a refund request asks, its fields typed. */
export interface RefundRequest {
  invoiceId: string | null;
  transactionId: string | null;
  /** A decimal string (parsed with the coin's decimals once the coin is known), or a word. */
  amount: string;
  toAddress: string | null;
  refundId: string | null;
  feePaidBy: RefundFeePayer;
  comment: string | null;
}

export function parseRefundRequest(b: CreateRefundBodyShape, ofStray = false): RefundRequest {
  const invoiceId = b.invoice_id?.toLowerCase() ?? null;
  const transactionId = b.transaction_id?.toLowerCase() ?? null;
  if (!ofStray && invoiceId === null && transactionId === null) throw validationError('invoice_id', 'invoice_id or transaction_id is required');
  return {
    invoiceId,
    transactionId,
    amount: b.amount,
    toAddress: b.to_address ?? null,
    refundId: b.refund_id ?? null,
    feePaidBy: b.network_fee_paid_by ?? 'merchant',
    comment: b.comment ?? null,
  };
}

/** A refund's decimal amount in a coin of `decimals`: positive, at most its decimals. */
export function parseRefundAmount(raw: string, decimals: number): Amount {
  const amount = Amount.parse(raw, { field: 'amount', decimals });
  if (!amount.isPositive()) throw validationError('amount', 'amount must be positive');
  return amount;
}

/** The filters of GET /v1/refunds. */
export interface RefundFilters {
  status?: RefundStatus;
  invoice_id?: string;
  refund_id?: string;
}
