import { EntitySchema } from 'typeorm';

/**
 * The money tables (issue 4): the ledger's journal and its cached balances, invoices and the
 * merchant-visible transactions. Amounts are decimal strings in coin units (SQLite's INTEGER would
 * overflow for wei); timestamps RFC 3339 UTC text.
 */

/**
 * posted: moves `amount` at once. pending: reserves it (a hold, TigerBeetle's two-phase transfer).
 * post_pending: settles a pending entry with `amount` ≤ the reserved amount (the rest is released).
 * void_pending: releases a pending entry whole.
 */
export type LedgerEntryKind = 'posted' | 'pending' | 'post_pending' | 'void_pending';

/** One journal line. Never updated, never deleted. */
export interface LedgerEntryRow {
  seq: number;
  id: string;
  coin_id: string;
  debit_book: string;
  credit_book: string;
  amount: string;
  kind: LedgerEntryKind;
  /** The pending entry a post_pending / void_pending settles (unique: a hold is settled once). */
  pending_id: string | null;
  /** The posted entry this one reverses (unique: an entry is reversed once). */
  reverses_id: string | null;
  /** Why money moved: `invoice_payment`, `platform_fee`, `adjustment`, `withdrawal`, ... */
  code: string;
  /** The transaction (or other object) it belongs to. */
  ref_id: string | null;
  created_at: string;
}

/** Sums of a (book, coin) over the journal, cached in the transaction that appends. */
export interface LedgerBalanceRow {
  book: string;
  coin_id: string;
  debits_posted: string;
  credits_posted: string;
  debits_pending: string;
  credits_pending: string;
  updated_at: string;
}

export type InvoiceStatus = 'new' | 'pending' | 'paid' | 'underpaid' | 'expired' | 'cancelled';
export type FeePaidBy = 'merchant' | 'payer';
export type InvoiceResolution = 'accepted_underpayment';

export interface InvoiceRow {
  id: string;
  account_id: string;
  status: InvoiceStatus;
  currency: string;
  amount: string;
  coin_id: string | null;
  address_id: string | null;
  address: string | null;
  amount_crypto: string | null;
  payer_amount: string | null;
  paid_amount: string;
  remaining_amount: string;
  overpaid_amount: string;
  /** The exact sum of the invoice's live refunds (PRODUCT §16). */
  refunded_amount: string;
  /** `accepted_underpayment` once the merchant accepted an underpaid invoice as paid (PRODUCT §16). */
  resolution: InvoiceResolution | null;
  amount_fiat: string | null;
  fiat_currency: string | null;
  rate_locked: string | null;
  rate_locked_at: string | null;
  late_payment: boolean;
  fee_paid_by: FeePaidBy;
  /** The account's platform fee, locked with the coin: payer_amount and every credit use it. */
  fee_percent: string | null;
  /** The account's underpayment tolerance, locked at creation. */
  tolerance_percent: string;
  order_id: string | null;
  idempotency_by_order_id: boolean;
  description: string | null;
  return_url: string | null;
  webhook_url: string | null;
  /** JSON text of the metadata object, or null. */
  metadata: string | null;
  /** JSON text of the kept coin ids, or null when not sent. */
  allowed_coin_ids: string | null;
  ttl_expires_at: string;
  expired_at: string | null;
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
}

export type TransactionType = 'invoice_payment' | 'deposit' | 'withdrawal' | 'adjustment';
export type TransactionStatus = 'pending' | 'confirmed' | 'reverted';

export interface TransactionRow {
  id: string;
  account_id: string;
  type: TransactionType;
  status: TransactionStatus;
  coin_id: string;
  /** Gross; negative on an adjustment that takes a credit back. */
  amount: string;
  /** Known once confirmed. */
  fee: string | null;
  net_amount: string | null;
  txid: string | null;
  chain_transfer_id: string | null;
  invoice_id: string | null;
  address_id: string | null;
  withdrawal_id: string | null;
  /** The transaction an adjustment takes back. */
  reverses_id: string | null;
  /** An incoming payment's: the exact sum of its live refunds (PRODUCT §16); '0' by default. */
  refunded_amount?: string;
  /** A withdrawal row's: the refund it pays (or holds for, while the refund waits for its address). */
  refund_id?: string | null;
  created_at: string;
  confirmed_at: string | null;
  updated_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };
const amount = { type: 'varchar' as const, length: 80 };
const ref = { type: 'varchar' as const, length: 36 };

export const LedgerEntryEntity = new EntitySchema<LedgerEntryRow>({
  name: 'LedgerEntry',
  tableName: 'ledger_entries',
  columns: {
    seq: { type: 'integer', primary: true, generated: 'increment' },
    id: { ...ref, unique: true },
    coin_id: ref,
    debit_book: { type: 'varchar', length: 64 },
    credit_book: { type: 'varchar', length: 64 },
    amount,
    kind: { type: 'varchar', length: 16 },
    pending_id: { ...ref, nullable: true, unique: true },
    reverses_id: { ...ref, nullable: true, unique: true },
    code: { type: 'varchar', length: 32 },
    ref_id: { ...ref, nullable: true },
    created_at: ts,
  },
});

export const LedgerBalanceEntity = new EntitySchema<LedgerBalanceRow>({
  name: 'LedgerBalance',
  tableName: 'ledger_balances',
  columns: {
    book: { type: 'varchar', length: 64, primary: true },
    coin_id: { ...ref, primary: true },
    debits_posted: amount,
    credits_posted: amount,
    debits_pending: amount,
    credits_pending: amount,
    updated_at: ts,
  },
});

export const InvoiceEntity = new EntitySchema<InvoiceRow>({
  name: 'Invoice',
  tableName: 'invoices',
  columns: {
    id: { ...ref, primary: true },
    account_id: ref,
    status: { type: 'varchar', length: 16 },
    currency: { type: 'varchar', length: 16 },
    amount,
    coin_id: { ...ref, nullable: true },
    address_id: { ...ref, nullable: true },
    address: { type: 'varchar', length: 128, nullable: true },
    amount_crypto: { ...amount, nullable: true },
    payer_amount: { ...amount, nullable: true },
    paid_amount: amount,
    remaining_amount: amount,
    overpaid_amount: amount,
    refunded_amount: { ...amount, default: '0' },
    resolution: { type: 'varchar', length: 32, nullable: true },
    amount_fiat: { ...amount, nullable: true },
    fiat_currency: { type: 'varchar', length: 8, nullable: true },
    rate_locked: { ...amount, nullable: true },
    rate_locked_at: { ...ts, nullable: true },
    late_payment: { type: 'boolean' },
    fee_paid_by: { type: 'varchar', length: 16 },
    fee_percent: { type: 'varchar', length: 40, nullable: true },
    tolerance_percent: { type: 'varchar', length: 40 },
    order_id: { type: 'varchar', length: 128, nullable: true },
    idempotency_by_order_id: { type: 'boolean' },
    description: { type: 'text', nullable: true },
    return_url: { type: 'text', nullable: true },
    webhook_url: { type: 'text', nullable: true },
    metadata: { type: 'text', nullable: true },
    allowed_coin_ids: { type: 'text', nullable: true },
    ttl_expires_at: ts,
    expired_at: { ...ts, nullable: true },
    cancelled_at: { ...ts, nullable: true },
    created_at: ts,
    updated_at: ts,
  },
});

export const TransactionEntity = new EntitySchema<TransactionRow>({
  name: 'Transaction',
  tableName: 'transactions',
  columns: {
    id: { ...ref, primary: true },
    account_id: ref,
    type: { type: 'varchar', length: 16 },
    status: { type: 'varchar', length: 16 },
    coin_id: ref,
    amount,
    fee: { ...amount, nullable: true },
    net_amount: { ...amount, nullable: true },
    txid: { type: 'varchar', length: 128, nullable: true },
    chain_transfer_id: { ...ref, nullable: true },
    invoice_id: { ...ref, nullable: true },
    address_id: { ...ref, nullable: true },
    withdrawal_id: { ...ref, nullable: true },
    reverses_id: { ...ref, nullable: true },
    refunded_amount: { ...amount, default: '0' },
    refund_id: { ...ref, nullable: true },
    created_at: ts,
    confirmed_at: { ...ts, nullable: true },
    updated_at: ts,
  },
});
