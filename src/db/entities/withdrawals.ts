import { EntitySchema } from 'typeorm';

export type WithdrawalStatus = 'pending' | 'review' | 'awaiting_approval' | 'processing' | 'broadcast' | 'completed' | 'failed' | 'rejected' | 'cancelled';
export type ReviewReason = 'limit' | 'pattern' | 'manual' | 'compliance' | 'signer_limit';
export type NetworkFeeMode = 'reserved' | 'actual';

/** A withdrawal (PRODUCT §8). Amounts are decimal strings in the withdrawn coin. */
export interface WithdrawalRow {
  id: string;
  account_id: string;
  status: WithdrawalStatus;
  payout_id: string | null;
  coin_id: string;
  amount: string;
  to_address: string;
  comment: string | null;
  review_reason: ReviewReason | null;
  txid: string | null;
  confirmations: number;
  failure_reason: string | null;
  platform_fee: string;
  network_fee_reserved: string;
  network_fee_charged: string | null;
  network_fee_mode: NetworkFeeMode;
  total_debit: string;
  /** The key that created it (a dual approval must come from another member than its secret holder). */
  api_key_id: string;
  /** The member who approved or rejected it (review, awaiting_approval). */
  decided_by: string | null;
  decided_at: string | null;
  /** The payout side's: the signed transaction (hex) as handed to the node. */
  signed_tx: string | null;
  /** JSON list of every txid that could pay it (a fee replacement adds one). */
  candidate_txids: string;
  claimed_by: string | null;
  claimed_at: string | null;
  /** The refund this withdrawal pays (PRODUCT §16); null for a plain withdrawal. */
  refund_id?: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** An Idempotency-Key of a merchant, bound for good to the withdrawal it created or found. */
export interface WithdrawalKeyRow {
  account_id: string;
  key: string;
  withdrawal_id: string;
  created_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };
const amount = { type: 'varchar' as const, length: 80 };
const ref = { type: 'varchar' as const, length: 36 };

export const WithdrawalEntity = new EntitySchema<WithdrawalRow>({
  name: 'Withdrawal',
  tableName: 'withdrawals',
  columns: {
    id: { ...ref, primary: true },
    account_id: ref,
    status: { type: 'varchar', length: 24 },
    payout_id: { type: 'varchar', length: 128, nullable: true },
    coin_id: ref,
    amount,
    to_address: { type: 'varchar', length: 128 },
    comment: { type: 'text', nullable: true },
    review_reason: { type: 'varchar', length: 24, nullable: true },
    txid: { type: 'varchar', length: 128, nullable: true },
    confirmations: { type: 'integer' },
    failure_reason: { type: 'text', nullable: true },
    platform_fee: amount,
    network_fee_reserved: amount,
    network_fee_charged: { ...amount, nullable: true },
    network_fee_mode: { type: 'varchar', length: 16 },
    total_debit: amount,
    api_key_id: ref,
    decided_by: { ...ref, nullable: true },
    decided_at: { ...ts, nullable: true },
    signed_tx: { type: 'text', nullable: true },
    candidate_txids: { type: 'text' },
    claimed_by: { type: 'varchar', length: 64, nullable: true },
    claimed_at: { ...ts, nullable: true },
    refund_id: { ...ref, nullable: true },
    created_at: ts,
    updated_at: ts,
    completed_at: { ...ts, nullable: true },
  },
});

export const WithdrawalKeyEntity = new EntitySchema<WithdrawalKeyRow>({
  name: 'WithdrawalKey',
  tableName: 'withdrawal_keys',
  columns: {
    account_id: { ...ref, primary: true },
    key: { type: 'varchar', length: 128, primary: true },
    withdrawal_id: ref,
    created_at: ts,
  },
});

/** An address an account allows payouts to, per coin (SPEC POST /v1/withdrawals rule 3). */
export interface WhitelistEntryRow {
  id: string;
  account_id: string;
  coin_id: string;
  address: string;
  label: string | null;
  status: 'active' | 'removed';
  created_by: string;
  created_at: string;
  removed_at: string | null;
}

export const WhitelistEntryEntity = new EntitySchema<WhitelistEntryRow>({
  name: 'WhitelistEntry',
  tableName: 'withdrawal_whitelist',
  columns: {
    id: { ...ref, primary: true },
    account_id: ref,
    coin_id: ref,
    address: { type: 'varchar', length: 128 },
    label: { type: 'varchar', length: 200, nullable: true },
    status: { type: 'varchar', length: 16 },
    created_by: { type: 'varchar', length: 254 },
    created_at: ts,
    removed_at: { ...ts, nullable: true },
  },
});
