import test from 'ava';
import { DataSource } from 'typeorm';
import { applyKeyset, keysetBatches } from '../../../src/db/keyset';

async function rowsDb(n: number) {
  const ds = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
  await ds.initialize();
  await ds.query('CREATE TABLE rows (id TEXT PRIMARY KEY, account TEXT NOT NULL, created_at TEXT NOT NULL)');
  await ds.query('CREATE INDEX rows_account_time ON rows (account, created_at, id)');
  for (let i = 0; i < n; i++) {
    await ds.query('INSERT INTO rows VALUES (?, ?, ?)', [
      `r${String(i).padStart(5, '0')}`,
      i % 3 === 0 ? 'b' : 'a',
      new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000).toISOString(),
    ]);
  }
  return ds;
}

/** The list of account `a` before `to`, newest first: the shape of an export with a `to` filter. */
const listBefore = (ds: DataSource, to: string) =>
  ds
    .createQueryBuilder()
    .from('rows', 'r')
    .select(['r.id AS id', 'r.created_at AS created_at'])
    .where('r.account = :account', { account: 'a' })
    .andWhere('r.created_at < :to', { to });

test("a cursor's bound comes before the list's own conditions (SQLite ranges the index on the first of two upper bounds)", async (t) => {
  const ds = await rowsDb(0);
  t.teardown(() => ds.destroy());
  const [sql, params] = applyKeyset(listBefore(ds, '2026-02-01T00:00:00.000Z'), 'r', {
    limit: 10,
    after: { created_at: '2026-01-01T00:00:05.000Z', id: 'r00010' },
  }).getQueryAndParameters();
  t.regex(sql, /WHERE r\.created_at <= \? AND \(r\.created_at < \? OR r\.id < \?\) AND \(r\.account = \? AND r\.created_at < \?\)/);
  t.deepEqual(params, ['2026-01-01T00:00:05.000Z', '2026-01-01T00:00:05.000Z', 'r00010', 'a', '2026-02-01T00:00:00.000Z']);
});

test('keyset batches of a filtered list give every row once, in order, across equal times', async (t) => {
  const ds = await rowsDb(600);
  t.teardown(() => ds.destroy());
  const to = new Date(Date.UTC(2026, 0, 1) + 250 * 1000).toISOString();
  const expected = ((await listBefore(ds, to).orderBy('r.created_at', 'DESC').addOrderBy('r.id', 'DESC').getRawMany()) as { id: string }[]).map((r) => r.id);
  const got: string[] = [];
  for await (const batch of keysetBatches(() => listBefore(ds, to), 'r', {
    after: null,
    batchSize: 7,
    read: (qb) => qb.getRawMany() as Promise<{ id: string; created_at: string }[]>,
    keyOf: (r) => r,
  })) {
    t.true(batch.length <= 7);
    got.push(...batch.map((r) => r.id));
  }
  t.true(expected.length > 300);
  t.deepEqual(got, expected);
});
