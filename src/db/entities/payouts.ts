/**
 * The payout worker's stored payouts (migration 0021), read and written as plain rows through
 * src/db/raw.ts. Amounts are decimal strings of base units of the chain's native coin.
 */
export type PayoutStatus = 'signed' | 'broadcast' | 'confirmed' | 'failed';

/** A candidate that pays the payout's withdrawals, or the one `coinkeep payouts cancel` made to pay its coins back to the wallet. */
export type CandidateKind = 'pay' | 'cancel';

export interface ChainPayoutRow {
  id: string;
  chain_id: string;
  account_id: string;
  coin_id: string;
  status: PayoutStatus;
  reservation: string;
  broadcast_height: number | null;
  first_broadcast_at: string | null;
  held: number;
  confirmed_txid: string | null;
  failure_reason: string | null;
  /** When an owner or admin asked `coinkeep payouts cancel` (its cancel candidate follows). */
  cancel_requested_at: string | null;
  /** When the chain core saw this payout mined after it had failed (PRODUCT §14). */
  reopened_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChainPayoutCandidateRow {
  payout_id: string;
  seq: number;
  chain_id: string;
  txid: string;
  /** The signed transaction, sealed with the master key (bound to this cell). */
  raw_sealed: string;
  fee: string;
  /** The rail's JSON (PayoutCandidate.data). */
  data: string;
  kind: CandidateKind;
  created_at: string;
}

export interface ChainPayoutLegRow {
  withdrawal_id: string;
  payout_id: string;
  output: number;
  created_at: string;
}
