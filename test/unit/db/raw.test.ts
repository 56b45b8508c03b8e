import test from 'ava';
import type { EntityManager } from 'typeorm';
import { inList, insertRow, insertRowIfAbsent, updateRows } from '../../../src/db/raw';

/** An EntityManager of either dialect that records the SQL it is given and runs nothing. */
function recording(type: 'postgres' | 'better-sqlite3'): { em: EntityManager; sql: string[] } {
  const sql: string[] = [];
  const statement = { reader: false, run: () => ({ changes: 1 }), all: () => [] };
  const em = {
    connection: { options: { type }, driver: { databaseConnection: { prepare: (text: string) => (sql.push(text), statement) } } },
    query: async (text: string) => (sql.push(text), []),
    queryRunner: { query: async (text: string) => (sql.push(text), { affected: 1, records: [] }) },
  };
  return { em: em as unknown as EntityManager, sql };
}

test('rows of one table in other columns, or in another order, are inserted with their own SQL', async (t) => {
  const { em, sql } = recording('postgres');
  await insertRow(em, 'shapes_a', { id: '1', status: 'new' });
  await insertRow(em, 'shapes_a', { status: 'new', id: '2' });
  await insertRow(em, 'shapes_a', { id: '3' });
  await insertRow(em, 'shapes_a', { id: '4', status: 'new' });
  await insertRowIfAbsent(em, 'shapes_a', { id: '5', status: 'new' });
  t.deepEqual(sql, [
    'INSERT INTO shapes_a ("id", "status") VALUES ($1, $2)',
    'INSERT INTO shapes_a ("status", "id") VALUES ($1, $2)',
    'INSERT INTO shapes_a ("id") VALUES ($1)',
    'INSERT INTO shapes_a ("id", "status") VALUES ($1, $2)',
    'INSERT INTO shapes_a ("id", "status") VALUES ($1, $2) ON CONFLICT DO NOTHING',
  ]);
});

test('updates of the same columns matched on other columns have their own SQL', async (t) => {
  const { em, sql } = recording('postgres');
  await updateRows(em, 'shapes_b', { status: 'paid' }, { id: '1' });
  await updateRows(em, 'shapes_b', { status: 'paid' }, { id: '1', status: 'new' });
  await updateRows(em, 'shapes_b', { status: 'paid', id: '2' }, { id: '1' });
  await updateRows(em, 'shapes_b', { status: 'paid' }, { id: '3' });
  t.deepEqual(sql, [
    'UPDATE shapes_b SET "status" = $1 WHERE "id" = $2',
    'UPDATE shapes_b SET "status" = $1 WHERE "id" = $2 AND "status" = $3',
    'UPDATE shapes_b SET "status" = $1, "id" = $2 WHERE "id" = $3',
    'UPDATE shapes_b SET "status" = $1 WHERE "id" = $2',
  ]);
});

test("a shape written on PostgreSQL and on SQLite gets each dialect's placeholders", async (t) => {
  const pg = recording('postgres');
  const lite = recording('better-sqlite3');
  await insertRow(pg.em, 'shapes_c', { id: '1', status: 'new' });
  await insertRow(lite.em, 'shapes_c', { id: '1', status: 'new' });
  await updateRows(pg.em, 'shapes_c', { status: 'paid' }, { id: '1' });
  await updateRows(lite.em, 'shapes_c', { status: 'paid' }, { id: '1' });
  t.deepEqual(pg.sql, ['INSERT INTO shapes_c ("id", "status") VALUES ($1, $2)', 'UPDATE shapes_c SET "status" = $1 WHERE "id" = $2']);
  t.deepEqual(lite.sql, ['INSERT INTO shapes_c ("id", "status") VALUES (?, ?)', 'UPDATE shapes_c SET "status" = ? WHERE "id" = ?']);
});

const on = (type: 'postgres' | 'better-sqlite3') => ({ connection: { options: { type } } }) as unknown as EntityManager;

test('an IN list is padded to the next power of two with its last value, placeholders numbered from `first` on PostgreSQL', (t) => {
  t.deepEqual(inList(on('postgres'), ['a', 'b', 'c'], 2), { sql: 'IN ($2, $3, $4, $5)', params: ['a', 'b', 'c', 'c'] });
  t.deepEqual(inList(on('postgres'), ['a'], 1), { sql: 'IN ($1)', params: ['a'] });
  t.deepEqual(inList(on('better-sqlite3'), ['a', 'b', 'c', 'd', 'e'], 2).sql, `IN (${Array(8).fill('?').join(', ')})`);
  t.deepEqual(inList(on('better-sqlite3'), ['a', 'b', 'c', 'd'], 2).params, ['a', 'b', 'c', 'd']);
});

test('an IN list of nothing is refused (SQL has no empty list)', (t) => {
  t.throws(() => inList(on('postgres'), [], 1), { message: /no values/ });
});
