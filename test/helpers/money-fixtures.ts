import { TransactionEntity, type TransactionRow, type TransactionStatus, type TransactionType } from '../../src/db/entities/money';
import type { Store } from '../../src/db/store';
import { accountBook, EXTERNAL_BOOK, FEE_BOOK, Ledger } from '../../src/ledger/ledger';
import { systemClock, type Clock } from '../../src/shared/clock';
import { newId } from '../../src/shared/ids';
import { Amount } from '../../src/shared/amount';

export interface FixtureTransaction {
  accountId: string;
  coinId: string;
  type?: TransactionType;
  status?: TransactionStatus;
  /** Gross, coin units. */
  amount: string;
  fee?: string;
  txid?: string | null;
  invoiceId?: string | null;
  addressId?: string | null;
  withdrawalId?: string | null;
  chainTransferId?: string | null;
  createdAt?: string;
}

/**
 * Writes a merchant-visible transaction the way crediting does (without invoices): the row, and for
 * a confirmed incoming one the ledger credit of the account (net) and of the fee book (fee), in one
 * write transaction. Only what the reading side and exports need.
 */
export async function recordTransaction(store: Store, t: FixtureTransaction, clock: Clock = systemClock): Promise<TransactionRow> {
  const ledger = new Ledger(clock);
  const status = t.status ?? 'confirmed';
  const type = t.type ?? 'invoice_payment';
  const gross = Amount.of(t.amount);
  const fee = status === 'confirmed' ? Amount.of(t.fee ?? '0') : null;
  const now = t.createdAt ?? clock.now().toISOString();
  const row: TransactionRow = {
    id: newId(),
    account_id: t.accountId,
    type,
    status,
    coin_id: t.coinId,
    amount: gross.toString(),
    fee: fee?.toString() ?? null,
    net_amount: fee ? gross.minus(fee).toString() : null,
    txid: t.txid === undefined ? `tx-${newId()}` : t.txid,
    chain_transfer_id: t.chainTransferId ?? null,
    invoice_id: t.invoiceId ?? null,
    address_id: t.addressId ?? null,
    withdrawal_id: t.withdrawalId ?? null,
    reverses_id: null,
    created_at: now,
    confirmed_at: status === 'confirmed' ? now : null,
    updated_at: now,
  };
  await store.write(async (em) => {
    await em.insert(TransactionEntity, row);
    if (status === 'confirmed' && (type === 'invoice_payment' || type === 'deposit') && gross.isPositive()) {
      const net = gross.minus(fee!);
      const moves = [];
      if (net.isPositive()) moves.push({ coinId: t.coinId, debit: EXTERNAL_BOOK, credit: accountBook(t.accountId), amount: net, code: type, refId: row.id });
      if (fee!.isPositive()) moves.push({ coinId: t.coinId, debit: EXTERNAL_BOOK, credit: FEE_BOOK, amount: fee!, code: 'platform_fee', refId: row.id });
      await ledger.post(em, moves);
    }
  });
  return row;
}

const TX_COLUMNS = [
  'id',
  'account_id',
  'type',
  'status',
  'coin_id',
  'amount',
  'fee',
  'net_amount',
  'txid',
  'chain_transfer_id',
  'invoice_id',
  'address_id',
  'withdrawal_id',
  'reverses_id',
  'created_at',
  'confirmed_at',
  'updated_at',
] as const;

/** Wei as an ETH decimal string, normalised like Amount (plain bigint text: seeding a million rows stays fast). */
function weiText(units: bigint): string {
  const digits = units.toString().padStart(19, '0');
  const frac = digits.slice(-18).replace(/0+$/, '');
  const whole = digits.slice(0, -18);
  return frac ? `${whole}.${frac}` : whole;
}

/**
 * Bulk rows for exports and benchmarks: `count` confirmed invoice payments of one account, one
 * millisecond apart from `start`, with wei-sized amounts, written in one transaction (SQLite: one
 * prepared statement; PostgreSQL: multi-row INSERTs). No ledger entries: exports read the
 * transactions table only. Returns the first row's time and the last one's.
 */
export async function seedTransactions(
  store: Store,
  accountId: string,
  count: number,
  opts: { coinId: string; start?: number; chunk?: number },
): Promise<{ first: string; last: string }> {
  const start = opts.start ?? Date.parse('2025-01-01T00:00:00.000Z');
  const chunk = opts.chunk ?? 1000;
  const pg = store.dialect === 'postgres';
  const rowSql = (offset: number) => `(${TX_COLUMNS.map((_, j) => (pg ? `$${offset + j + 1}` : '?')).join(',')})`;
  const rowOf = (seq: number): unknown[] => {
    const t = new Date(start + seq).toISOString();
    const units = BigInt(seq + 1) * 1_000_000_000_000n + 1n;
    const fee = units / 100n;
    return [
      newId(),
      accountId,
      'invoice_payment',
      'confirmed',
      opts.coinId,
      weiText(units),
      weiText(fee),
      weiText(units - fee),
      `0x${seq.toString(16).padStart(64, '0')}`,
      null,
      null,
      null,
      null,
      null,
      t,
      t,
      t,
    ];
  };
  await store.write(async (em) => {
    if (!pg) {
      // better-sqlite3 underneath: one prepared statement inside the store's open transaction.
      const db = (em.connection.driver as unknown as { databaseConnection: { prepare(sql: string): { run(...p: unknown[]): unknown } } }).databaseConnection;
      const insert = db.prepare(`INSERT INTO transactions (${TX_COLUMNS.join(',')}) VALUES ${rowSql(0)}`);
      for (let seq = 0; seq < count; seq++) insert.run(...rowOf(seq));
      return;
    }
    for (let i = 0; i < count; i += chunk) {
      const n = Math.min(chunk, count - i);
      const params: unknown[] = [];
      const values: string[] = [];
      for (let k = 0; k < n; k++) {
        values.push(rowSql(params.length));
        params.push(...rowOf(i + k));
      }
      await em.query(`INSERT INTO transactions (${TX_COLUMNS.join(',')}) VALUES ${values.join(',')}`, params);
    }
  });
  return { first: new Date(start).toISOString(), last: new Date(start + count - 1).toISOString() };
}
