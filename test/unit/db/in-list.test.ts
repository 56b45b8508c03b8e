import test from 'ava';
import type { EntityManager } from 'typeorm';
import { inList } from '../../../src/db/raw';

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
