import { z } from 'zod';
import type { Catalog } from '../catalog/coins';
import type { NetworkFeeMode, WithdrawalRow } from '../db/entities/withdrawals';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';

/** A withdrawal as the API shows it (PRODUCT §8): its row with its coin's ticker and network. */
export type WithdrawalView = Pick<
  WithdrawalRow,
  | 'id'
  | 'status'
  | 'payout_id'
  | 'coin_id'
  | 'amount'
  | 'to_address'
  | 'comment'
  | 'review_reason'
  | 'txid'
  | 'confirmations'
  | 'failure_reason'
  | 'platform_fee'
  | 'network_fee_reserved'
  | 'network_fee_charged'
  | 'network_fee_mode'
  | 'total_debit'
  | 'created_at'
  | 'updated_at'
  | 'completed_at'
> & { ticker: string; network: string };

/** An estimate's answer (POST /v1/withdrawals/estimate). */
export interface EstimateView {
  coin_id: string;
  amount: string;
  platform_fee: string;
  network_fee_reserved: string;
  network_fee_mode: NetworkFeeMode;
  total_debit: string;
  expires_at: string;
}

/** A withdrawal's row as the API shows it. */
export function presentWithdrawal(row: WithdrawalRow, catalog: Catalog): WithdrawalView {
  const coin = catalog.coin(row.coin_id);
  return {
    id: row.id,
    status: row.status,
    payout_id: row.payout_id,
    coin_id: row.coin_id,
    ticker: coin?.ticker ?? '',
    network: coin?.network ?? '',
    amount: row.amount,
    to_address: row.to_address,
    comment: row.comment,
    review_reason: row.review_reason,
    txid: row.txid,
    confirmations: Number(row.confirmations),
    failure_reason: row.failure_reason,
    platform_fee: row.platform_fee,
    network_fee_reserved: row.network_fee_reserved,
    network_fee_charged: row.network_fee_charged,
    network_fee_mode: row.network_fee_mode,
    total_debit: row.total_debit,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}

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
