import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MetaEntity } from '../../../src/db/entities/team';
import { Store } from '../../../src/db/store';
import { tempPostgres } from '../../helpers/pg-database';

/**
 * Issue 2 §3, the store: SQLite with WAL, a busy timeout and foreign keys, its files the owner's
 * only; write transactions that never interleave on SQLite's one shared connection (STACK.md) and
 * roll back alone; the same transactions on PostgreSQL.
 */

async function sqlite(t: ExecutionContext): Promise<{ store: Store; file: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-store-'));
  const file = path.join(dir, 'coinkeep.db');
  const store = await Store.open({ url: `sqlite:${file}` });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await store.migrate();
  return { store, file };
}

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));

/** 40 parallel read-modify-write transactions, each pausing between its read and its write. */
async function concurrentIncrements(store: Store): Promise<number> {
  await store.write((em) => em.insert(MetaEntity, { key: 'counter', value: '0' }));
  await Promise.all(
    Array.from({ length: 40 }, () =>
      store.write(async (em) => {
        const row = await em.findOneByOrFail(MetaEntity, { key: 'counter' });
        await pause();
        await em.update(MetaEntity, { key: 'counter' }, { value: String(Number(row.value) + 1) });
      }),
    ),
  );
  return Number((await store.read.findOneByOrFail(MetaEntity, { key: 'counter' })).value);
}

/** A failing transaction among succeeding ones leaves nothing behind; the others commit. */
async function rollbackAlone(t: ExecutionContext, store: Store): Promise<void> {
  const results = await Promise.allSettled(
    ['a', 'b', 'fail', 'c'].map((k) =>
      store.write(async (em) => {
        await em.insert(MetaEntity, { key: `tx-${k}`, value: k });
        await pause();
        if (k === 'fail') throw new Error('refused on purpose');
      }),
    ),
  );
  t.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
  );
  const keys = (await store.read.find(MetaEntity))
    .map((r) => r.key)
    .filter((k) => k.startsWith('tx-'))
    .sort();
  t.deepEqual(keys, ['tx-a', 'tx-b', 'tx-c']);
}

test('SQLite: WAL, a busy timeout and foreign keys are on; the database files are 0600', async (t) => {
  const { store, file } = await sqlite(t);
  t.is(((await store.ds.query('PRAGMA journal_mode')) as Array<{ journal_mode: string }>)[0]!.journal_mode, 'wal');
  t.is(((await store.ds.query('PRAGMA foreign_keys')) as Array<{ foreign_keys: number }>)[0]!.foreign_keys, 1);
  t.true(((await store.ds.query('PRAGMA busy_timeout')) as Array<{ timeout: number }>)[0]!.timeout >= 1000);
  await store.write((em) => em.insert(MetaEntity, { key: 'k', value: 'v' }));
  t.is(statSync(file).mode & 0o777, 0o600);
});

test('SQLite: parallel write transactions never interleave on the shared connection', async (t) => {
  const { store } = await sqlite(t);
  t.is(await concurrentIncrements(store), 40);
});

test('SQLite: a failing write transaction rolls back alone', async (t) => {
  const { store } = await sqlite(t);
  await rollbackAlone(t, store);
});

test('PostgreSQL: a failing write transaction rolls back alone among concurrent ones', async (t) => {
  const url = await tempPostgres(t);
  const store = await Store.open({ url });
  t.teardown(() => store.close());
  await store.migrate();
  await rollbackAlone(t, store);
});
