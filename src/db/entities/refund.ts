import { EntitySchema } from 'typeorm';
import type { WithdrawalStatus } from './withdrawals';

/** A refund's status (PRODUCT §16): waiting for the payer's address, then its withdrawal's, or expired unused. */
export type RefundStatus = 'awaiting_address' | WithdrawalStatus | 'expired';
export type RefundFeePayer = 'merchant' | 'payer';

/**
 * A refund (PRODUCT §16): money sent back against an invoice or an incoming transaction. A
 * withdrawal underneath once the address is known; its status follows the withdrawal's.
 */
export interface RefundRow {
  id: string;
  account_id: string;
  status: RefundStatus;
  /** The merchant's own id (idempotent like a withdrawal's payout_id). */
  refund_id: string | null;
  invoice_id: string | null;
  transaction_id: string | null;
  coin_id: string;
  /** Taken from what was received: the amount sent plus, when the payer pays it, the network fee. */
  amount: string;
  to_address: string | null;
  /** SHA-256 (hex) of the payer link's token; null once used or when the address was given. */
  token_hash: string | null;
  /** The token sealed under the master key (the merchant reads `refund_url` again); null with token_hash. */
  token_sealed: string | null;
  network_fee_paid_by: RefundFeePayer;
  comment: string | null;
  withdrawal_id: string | null;
  /** Its withdrawal's txid, once broadcast (kept with the refund as the withdrawal moves). */
  txid: string | null;
  /** The pending transaction holding the money while the refund waits for its address. */
  hold_id: string | null;
  /** The key that asked for it (its withdrawal is created on that key's behalf). */
  api_key_id: string;
  failure_reason: string | null;
  /** When an unused payer link expires (awaiting_address only). */
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };
const ref = { type: 'varchar' as const, length: 36 };

export const RefundEntity = new EntitySchema<RefundRow>({
  name: 'Refund',
  tableName: 'refunds',
  columns: {
    id: { ...ref, primary: true },
    account_id: ref,
    status: { type: 'varchar', length: 24 },
    refund_id: { type: 'varchar', length: 128, nullable: true },
    invoice_id: { ...ref, nullable: true },
    transaction_id: { ...ref, nullable: true },
    coin_id: ref,
    amount: { type: 'varchar', length: 80 },
    to_address: { type: 'varchar', length: 128, nullable: true },
    token_hash: { type: 'varchar', length: 64, nullable: true },
    token_sealed: { type: 'text', nullable: true },
    network_fee_paid_by: { type: 'varchar', length: 16 },
    comment: { type: 'text', nullable: true },
    withdrawal_id: { ...ref, nullable: true },
    txid: { type: 'varchar', length: 128, nullable: true },
    hold_id: { ...ref, nullable: true },
    api_key_id: ref,
    failure_reason: { type: 'text', nullable: true },
    expires_at: { ...ts, nullable: true },
    created_at: ts,
    updated_at: ts,
  },
});
