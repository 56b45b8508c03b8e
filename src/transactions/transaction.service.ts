import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { TransactionStatus, TransactionType } from '../db/entities/money';
import type { Store } from '../db/store';
import { applyKeyset, countUpTo, keysetBatches, type PageKey } from '../db/keyset';
import type { Catalog } from '../catalog/coins';

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
export interface TransactionView {
  id: string;
  type: TransactionType;
  status: TransactionStatus;
  coin_id: string;
  ticker: string | null;
  network: string | null;
  amount: string;
  fee: string | null;
  net_amount: string | null;
  txid: string | null;
  confirmations: number | null;
  invoice_id: string | null;
  address_id: string | null;
  withdrawal_id: string | null;
  created_at: string;
  confirmed_at: string | null;
}

/** One row as read: the transaction's columns and its chain transfer's confirmations. */
type RawTransaction = Omit<TransactionView, 'ticker' | 'network' | 'confirmations'> & { confirmations: number | string | null };

const COLUMNS = [
  'id', 'type', 'status', 'coin_id', 'amount', 'fee', 'net_amount', 'txid', 'invoice_id', 'address_id', 'withdrawal_id', 'created_at', 'confirmed_at',
] as const;

/** Rows read per query by an export. */
export const EXPORT_BATCH = 2000;

/**
 * The merchant-visible transactions, read side: pages, one by id, and the whole filtered list in
 * keyset batches for exports. Confirmations come from the chain transfer a transaction belongs to
 * (null for a movement without one, such as an adjustment).
 */
export class TransactionService {
  constructor(
    private readonly store: Store,
    private readonly catalog: Catalog,
  ) {}

  async page(accountId: string, filters: TransactionFilters, page: { limit: number; after: PageKey | null }): Promise<TransactionView[]> {
    const rows = await this.read(applyKeyset(this.query(accountId, filters), 't', page));
    return rows.map((r) => this.present(r));
  }

  async get(accountId: string, id: string): Promise<TransactionView | null> {
    const [row] = await this.read(this.query(accountId, {}).andWhere('t.id = :id', { id }));
    return row ? this.present(row) : null;
  }

  /** The whole filtered list in list order, one batch in memory at a time. */
  async *batches(accountId: string, filters: TransactionFilters, after: PageKey | null): AsyncGenerator<TransactionView[]> {
    for await (const rows of keysetBatches(() => this.query(accountId, filters), 't', { after, batchSize: EXPORT_BATCH, read: (qb) => this.read(qb) })) {
      yield rows.map((r) => this.present(r));
    }
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
      .select(COLUMNS.map((c) => `t.${c}`))
      .addSelect('ct.confirmations', 'confirmations')
      .where('t.account_id = :account', { account: accountId });
    for (const k of ['type', 'status', 'coin_id', 'invoice_id', 'address_id'] as const) {
      if (f[k] !== undefined) qb.andWhere(`t.${k} = :f_${k}`, { [`f_${k}`]: f[k] });
    }
    if (f.from !== undefined) qb.andWhere('t.created_at >= :f_from', { f_from: f.from });
    if (f.to !== undefined) qb.andWhere('t.created_at < :f_to', { f_to: f.to });
    return qb;
  }

  private async read(qb: SelectQueryBuilder<ObjectLiteral>): Promise<RawTransaction[]> {
    const rows: Array<Record<string, unknown>> = await qb.getRawMany();
    // Raw columns come back as `t_<name>` (qualified selects) on every driver.
    return rows.map((r) => {
      const out: Record<string, unknown> = { confirmations: r.confirmations ?? null };
      for (const c of COLUMNS) out[c] = r[`t_${c}`];
      return out as RawTransaction;
    });
  }

  private present(r: RawTransaction): TransactionView {
    const coin = this.catalog.coin(r.coin_id);
    return {
      id: r.id,
      type: r.type,
      status: r.status,
      coin_id: r.coin_id,
      ticker: coin?.ticker ?? null,
      network: coin?.network ?? null,
      amount: r.amount,
      fee: r.fee,
      net_amount: r.net_amount,
      txid: r.txid,
      confirmations: r.confirmations === null ? null : Number(r.confirmations),
      invoice_id: r.invoice_id,
      address_id: r.address_id,
      withdrawal_id: r.withdrawal_id,
      created_at: r.created_at,
      confirmed_at: r.confirmed_at,
    };
  }
}
