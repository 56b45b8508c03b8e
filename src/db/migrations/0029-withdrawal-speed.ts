import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { col } from './table-helpers';

/**
 * What a withdrawal's creation writes and reads, made cheaper (issue 16 §6).
 *
 * Indexes of mostly-NULL columns leave their NULLs out. A withdrawal's hold row has
 * no chain transfer, invoice or address, and most ledger entries settle or reverse nothing: every
 * such row was still written into those indexes (a NULL is a key like any other), so each creation
 * paid index pages it never looks up. Every query on these columns compares them with a value,
 * which implies `IS NOT NULL` on both SQLite and PostgreSQL, so the same lookups use them; the
 * unique ones guard as before (NULLs never clashed).
 *
 * `withdrawal_day_sums`: per account, coin and ten minutes of creation time (`bucket`, the first 15
 * characters of the ISO time), the sum of the amounts of the withdrawals created then that still
 * count toward the daily limit (not cancelled, rejected or failed), as a floating-point number.
 * The daily-limit check reads the last 24 hours' buckets (the oldest one whole: an upper bound)
 * instead of summing every withdrawal of the day; only near the limit does it sum the rows. Filled
 * here from the withdrawals there are.
 */
const PARTIAL: ReadonlyArray<{ name: string; unique: boolean; on: string; where: string }> = [
  { name: 'transactions_transfer', unique: false, on: 'transactions (chain_transfer_id)', where: 'chain_transfer_id IS NOT NULL' },
  { name: 'transactions_invoice', unique: false, on: 'transactions (invoice_id)', where: 'invoice_id IS NOT NULL' },
  { name: 'transactions_address', unique: false, on: 'transactions (address_id)', where: 'address_id IS NOT NULL' },
  {
    name: 'transactions_live_transfer',
    unique: true,
    on: 'transactions (chain_transfer_id, type)',
    where: `chain_transfer_id IS NOT NULL AND status <> 'reverted' AND reverses_id IS NULL`,
  },
  {
    name: 'transactions_live_withdrawal',
    unique: true,
    on: 'transactions (withdrawal_id, type)',
    where: `withdrawal_id IS NOT NULL AND status <> 'reverted' AND reverses_id IS NULL`,
  },
  { name: 'ledger_entries_pending', unique: true, on: 'ledger_entries (pending_id)', where: 'pending_id IS NOT NULL' },
  { name: 'ledger_entries_reverses', unique: true, on: 'ledger_entries (reverses_id)', where: 'reverses_id IS NOT NULL' },
];

/** What 0004 and 0013 made: the same indexes with every row in them. */
const FULL: Readonly<Record<string, string | undefined>> = {
  transactions_live_transfer: `status <> 'reverted' AND reverses_id IS NULL`,
  transactions_live_withdrawal: `status <> 'reverted' AND reverses_id IS NULL`,
};

export class WithdrawalSpeed1767225600029 implements MigrationInterface {
  name = 'WithdrawalSpeed1767225600029';

  async up(q: QueryRunner): Promise<void> {
    for (const ix of PARTIAL) {
      await q.query(`DROP INDEX ${ix.name}`);
      await q.query(`CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX ${ix.name} ON ${ix.on} WHERE ${ix.where}`);
    }
    await q.createTable(
      new Table({
        name: 'withdrawal_day_sums',
        columns: [
          { ...col.ref('account_id'), isPrimary: true },
          { ...col.str('bucket', 16), isPrimary: true },
          { ...col.ref('coin_id'), isPrimary: true },
          { name: 'total', type: 'double precision' },
        ],
      }),
    );
    await q.query(
      `INSERT INTO withdrawal_day_sums (account_id, bucket, coin_id, total)
       SELECT account_id, substr(created_at, 1, 15), coin_id, SUM(CAST(amount AS DOUBLE PRECISION)) FROM withdrawals
       WHERE status NOT IN ('cancelled', 'rejected', 'failed') GROUP BY account_id, substr(created_at, 1, 15), coin_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('withdrawal_day_sums');
    for (const ix of PARTIAL) {
      await q.query(`DROP INDEX ${ix.name}`);
      const where = FULL[ix.name];
      await q.query(`CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX ${ix.name} ON ${ix.on}${where ? ` WHERE ${where}` : ''}`);
    }
  }
}
