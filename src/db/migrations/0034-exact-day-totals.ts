import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { Amount } from '../../shared/amount';
import { col } from './table-helpers';

/** Withdrawals read per page while the totals are filled. */
const PAGE = 10_000;

/**
 * The daily limit's ten-minute totals held exactly (issue 31 §2): `withdrawal_day_totals` keeps,
 * per account, coin and ten minutes of creation time (`bucket`), the sum of the amounts of the
 * withdrawals that still count toward the limit as a decimal string, in place of 0029's
 * floating-point `withdrawal_day_sums`. Filled here from the withdrawals there are, summed with
 * the money type (SQL would sum in floating point).
 */
export class ExactDayTotals1767225600034 implements MigrationInterface {
  name = 'ExactDayTotals1767225600034';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'withdrawal_day_totals',
        columns: [
          { ...col.ref('account_id'), isPrimary: true },
          { ...col.str('bucket', 16), isPrimary: true },
          { ...col.ref('coin_id'), isPrimary: true },
          col.str('total', 80),
        ],
      }),
    );
    const pg = q.connection.options.type === 'postgres';
    const totals = new Map<string, { account_id: string; bucket: string; coin_id: string; total: Amount }>();
    let after = '';
    for (;;) {
      const rows = (await q.query(
        `SELECT id, account_id, coin_id, amount, created_at FROM withdrawals WHERE id > ${pg ? '$1' : '?'} AND status NOT IN ('cancelled', 'rejected', 'failed') ORDER BY id LIMIT ${PAGE}`,
        [after],
      )) as Array<{ id: string; account_id: string; coin_id: string; amount: string; created_at: string }>;
      for (const w of rows) {
        const bucket = w.created_at.slice(0, 15);
        const key = `${w.account_id}\u0000${bucket}\u0000${w.coin_id}`;
        const t = totals.get(key);
        if (t) t.total = t.total.plus(Amount.of(w.amount));
        else totals.set(key, { account_id: w.account_id, bucket, coin_id: w.coin_id, total: Amount.of(w.amount) });
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    const p = (i: number) => (pg ? `$${i}` : '?');
    for (const t of totals.values()) {
      await q.query(`INSERT INTO withdrawal_day_totals (account_id, bucket, coin_id, total) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)})`, [
        t.account_id,
        t.bucket,
        t.coin_id,
        t.total.toString(),
      ]);
    }
    await q.dropTable('withdrawal_day_sums');
  }

  async down(q: QueryRunner): Promise<void> {
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
      'INSERT INTO withdrawal_day_sums (account_id, bucket, coin_id, total) SELECT account_id, bucket, coin_id, CAST(total AS DOUBLE PRECISION) FROM withdrawal_day_totals',
    );
    await q.dropTable('withdrawal_day_totals');
  }
}
