import { z } from 'zod';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { TransactionStatus, TransactionType } from '../db/entities/money';
import type { Store } from '../db/store';
import { applyKeyset, countUpTo, keysetBatches, type PageKey } from '../db/keyset';
import type { Catalog } from '../catalog/coins';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';

export const TRANSACTION_TYPES: readonly TransactionType[] = ['invoice_payment', 'deposit', 'withdrawal', 'adjustment'];
export const TRANSACTION_STATUSES: readonly TransactionStatus[] = ['pending', 'confirmed', 'reverted'];

/** The filters of GET /v1/transactions (PRODUCT §9); `from` inclusive, `to` exclusive. */
export interface TransactionFilters {
  type?: TransactionType;
  status?: TransactionStatus;
  coin_id?: string;
  invoice_id?: string;
  address_id?: string;
  from?: string;
  to?: string;
}

/** A transaction as the API shows it (PRODUCT §9). */
export const TransactionSchema = z
  .object({
    id: uuid(),
    type: z.enum(['invoice_payment', 'deposit', 'withdrawal', 'adjustment']),
    status: z.enum(['pending', 'confirmed', 'reverted']),
    coin_id: uuid(),
    ticker: z.string().nullable(),
    network: z.string().nullable(),
    amount: decimal(),
    fee: decimal().nullable(),
    net_amount: decimal().nullable(),
    txid: z.string().nullable(),
    confirmations: z.number().int().nullable(),
    invoice_id: uuid().nullable(),
    address_id: uuid().nullable(),
    withdrawal_id: uuid().nullable(),
    refund_id: uuid().nullable(),
    refunded_amount: decimal(),
    created_at: timestamp(),
    confirmed_at: timestamp().nullable(),
  })
  .meta({ id: 'Transaction' });
export type TransactionView = z.infer<typeof TransactionSchema>;
const sameKinds: Same<TransactionView['type'] | TransactionView['status'], TransactionType | TransactionStatus> = true;
void sameKinds;

const COLUMNS = [
  'id',
  'type',
  'status',
  'coin_id',
  'amount',
  'fee',
  'net_amount',
  'txid',
  'invoice_id',
  'address_id',
  'withdrawal_id',
  'refund_id',
  'refunded_amount',
  'created_at',
  'confirmed_at',
] as const;

/**
 * The merchant-visible transactions, read side: pages, one by id, and the whole filtered list in
 * keyset batches for exports. Confirmations come from the chain transfer a transaction belongs to,
 * or for a withdrawal from its payout once it has a txid (null for a movement without one, such
 * as an adjustment).
 */
export class TransactionService {
  constructor(
    private readonly store: Store,
    private readonly catalog: Catalog,
  ) {}

  page(accountId: string, filters: TransactionFilters, page: { limit: number; after: PageKey | null }): Promise<TransactionView[]> {
    return this.read(applyKeyset(this.query(accountId, filters), 't', page));
  }

  async get(accountId: string, id: string): Promise<TransactionView | null> {
    const [row] = await this.read(this.query(accountId, {}).andWhere('t.id = :id', { id }));
    return row ?? null;
  }

  /**
   * The whole filtered list in list order, `size` rows at a time, one batch in memory at a time;
   * rows as read, each presented (`present`) as an export writes it.
   */
  batches(accountId: string, filters: TransactionFilters, after: PageKey | null, size: number): AsyncIterable<RawTransaction[]> {
    return keysetBatches(() => this.query(accountId, filters), 't', {
      after,
      batchSize: size,
      read: (qb) => qb.getRawMany(),
      keyOf: (r: RawTransaction) => ({ created_at: r.t_created_at, id: r.t_id }),
    });
  }

  count(accountId: string, filters: TransactionFilters, after: PageKey | null, cap: number): Promise<number> {
    const qb = this.query(accountId, filters);
    if (after) applyKeyset(qb, 't', { limit: cap, after });
    return countUpTo(qb, cap);
  }

  private query(accountId: string, f: TransactionFilters): SelectQueryBuilder<ObjectLiteral> {
    const qb = this.store.read
      .createQueryBuilder()
      .from('transactions', 't')
      .leftJoin('chain_transfers', 'ct', 'ct.id = t.chain_transfer_id')
      // A withdrawal's row takes its payout's confirmations once it has a txid.
      .leftJoin('withdrawals', 'w', "w.id = t.withdrawal_id AND t.type = 'withdrawal'")
      .select(COLUMNS.map((c) => `t.${c}`))
      .addSelect('COALESCE(ct.confirmations, CASE WHEN t.txid IS NOT NULL THEN w.confirmations END)', 'confirmations')
      .where('t.account_id = :account', { account: accountId });
    for (const k of ['type', 'status', 'coin_id', 'invoice_id', 'address_id'] as const) {
      if (f[k] !== undefined) qb.andWhere(`t.${k} = :f_${k}`, { [`f_${k}`]: f[k] });
    }
    if (f.from !== undefined) qb.andWhere('t.created_at >= :f_from', { f_from: f.from });
    if (f.to !== undefined) qb.andWhere('t.created_at < :f_to', { f_to: f.to });
    return qb;
  }

  /** The rows presented straight from the raw result (columns come back as `t_<name>` on every driver). */
  private async read(qb: SelectQueryBuilder<ObjectLiteral>): Promise<TransactionView[]> {
    const rows: RawTransaction[] = await qb.getRawMany();
    return rows.map((r) => this.present(r));
  }

  /** A row as the API shows it (a JSON page's rows, an export's one by one). */
  present(r: RawTransaction): TransactionView {
    const coin = this.catalog.coin(r.t_coin_id);
    return {
      id: r.t_id,
      type: r.t_type,
      status: r.t_status,
      coin_id: r.t_coin_id,
      ticker: coin?.ticker ?? null,
      network: coin?.network ?? null,
      amount: r.t_amount,
      fee: r.t_fee,
      net_amount: r.t_net_amount,
      txid: r.t_txid,
      confirmations: r.confirmations === null || r.confirmations === undefined ? null : Number(r.confirmations),
      invoice_id: r.t_invoice_id,
      address_id: r.t_address_id,
      withdrawal_id: r.t_withdrawal_id,
      refund_id: r.t_refund_id ?? null,
      refunded_amount: r.t_refunded_amount ?? '0',
      created_at: r.t_created_at,
      confirmed_at: r.t_confirmed_at,
    };
  }
}

/**
 * One row as read: the transaction's columns as `t_<name>` and its chain transfer's confirmations
 * (a string on PostgreSQL's bigint, absent or null without a transfer).
 */
export type RawTransaction = {
  [C in (typeof COLUMNS)[number] as `t_${C}`]: TransactionView[C];
} & { confirmations?: number | string | null };
