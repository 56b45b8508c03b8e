import type { Catalog } from '../catalog/coins';
import type { NetworkFeeMode, WithdrawalRow } from '../db/entities/withdrawals';

/** A withdrawal as the API shows it (PRODUCT §8): its row with its coin's ticker and network. */
export type WithdrawalView = Pick<
  WithdrawalRow,
  | 'id' | 'status' | 'payout_id' | 'coin_id' | 'amount' | 'to_address' | 'comment' | 'review_reason' | 'txid' | 'confirmations'
  | 'failure_reason' | 'platform_fee' | 'network_fee_reserved' | 'network_fee_charged' | 'network_fee_mode' | 'total_debit'
  | 'created_at' | 'updated_at' | 'completed_at'
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
