import { z } from 'zod';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';
import type { EstimateView, WithdrawalView } from './withdrawal.view';

/** A withdrawal as the API returns it (SPEC "Withdrawal"). */
export const WithdrawalSchema = z
  .object({
    id: uuid(),
    status: z.enum(['pending', 'review', 'awaiting_approval', 'processing', 'broadcast', 'completed', 'failed', 'rejected', 'cancelled']),
    payout_id: z.string().nullable(),
    coin_id: uuid(),
    ticker: z.string(),
    network: z.string(),
    amount: decimal(),
    to_address: z.string(),
    comment: z.string().nullable(),
    review_reason: z.enum(['limit', 'pattern', 'manual', 'compliance', 'signer_limit']).nullable(),
    txid: z.string().nullable(),
    confirmations: z.number().int(),
    failure_reason: z.string().nullable(),
    platform_fee: decimal(),
    network_fee_reserved: decimal(),
    network_fee_charged: decimal().nullable(),
    network_fee_mode: z.enum(['reserved', 'actual']),
    total_debit: decimal(),
    created_at: timestamp(),
    updated_at: timestamp(),
    completed_at: timestamp().nullable(),
  })
  .meta({ id: 'Withdrawal' });

/** The answer of POST /v1/withdrawals/estimate. */
export const EstimateSchema = z
  .object({
    coin_id: uuid(),
    amount: decimal(),
    platform_fee: decimal(),
    network_fee_reserved: decimal(),
    network_fee_mode: z.enum(['reserved', 'actual']),
    total_debit: decimal(),
    expires_at: timestamp(),
  })
  .meta({ id: 'WithdrawalEstimate' });

const sameWithdrawal: Same<z.infer<typeof WithdrawalSchema>, WithdrawalView> = true;
const sameEstimate: Same<z.infer<typeof EstimateSchema>, EstimateView> = true;
void sameWithdrawal;
void sameEstimate;

/** The body of POST /v1/withdrawals (PRODUCT §8): types and sizes; coin, amount and address are checked after. */
export const CreateWithdrawalBody = z.strictObject({
  coin_id: uuid(),
  amount: z.string().min(1).max(100).meta({ description: 'decimal string, at most the coin\'s decimals' }),
  to_address: z.string().min(1).max(128),
  payout_id: z.string().regex(/^[\x20-\x7e]{1,128}$/).nullish(),
  comment: z.string().max(500).nullish(),
  network_fee_mode: z.enum(['reserved', 'actual']).nullish(),
});

/** The body of POST /v1/withdrawals/estimate: the withdrawal's fields (the destination optional, the others ignored). */
export const EstimateBody = z.looseObject({
  coin_id: uuid(),
  amount: z.string().min(1).max(100).meta({ description: 'decimal string, or "max": the largest amount whose total_debit fits the available balance (PRODUCT §14)' }),
  to_address: z.string().nullish(),
  network_fee_mode: z.enum(['reserved', 'actual']).nullish(),
});
