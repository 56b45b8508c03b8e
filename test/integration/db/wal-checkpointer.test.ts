import test from 'ava';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Store } from '../../../src/db/store';
import { WalCheckpointer } from '../../../src/db/wal-checkpointer';

const size = (f: string): number => statSync(f, { throwIfNoEntry: false })?.size ?? 0;

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('with background checkpoints, committed pages reach the database file without the writer checkpointing', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-wal-'));
  const file = path.join(dir, 'test.db');
  const store = await Store.open({ url: `sqlite:${file}`, backgroundCheckpoints: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await store.write((em) => em.query('CREATE TABLE rows (id INTEGER PRIMARY KEY, pad TEXT)'));
  const before = size(file);
  // About 6 MB of commits: the writer's own checkpoint (every 1000 pages) is off, so only the
  // worker can move them into the file.
  for (let i = 0; i < 300; i++) await store.write((em) => em.query('INSERT INTO rows (pad) VALUES (?)', ['x'.repeat(20_000)]));
  await until('the database file to grow', () => size(file) > before + 5_000_000);
  t.is((await store.read.query('SELECT COUNT(*) AS n FROM rows'))[0].n, 300);
  await store.close();
  t.is(size(`${file}-wal`), 0, 'the last connection to close empties the log');
  const again = await Store.open({ url: `sqlite:${file}` });
  t.is((await again.read.query('SELECT COUNT(*) AS n FROM rows'))[0].n, 300);
  await again.close();
});

test('without the option the writer checkpoints as SQLite does by default', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-wal-'));
  const store = await Store.open({ url: `sqlite:${path.join(dir, 'test.db')}` });
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  t.deepEqual(await store.read.query('PRAGMA wal_autocheckpoint'), [{ wal_autocheckpoint: 1000 }]);
});

test('a log grown past its bound is emptied by the main connection between transactions', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-wal-'));
  const file = path.join(dir, 'test.db');
  const store = await Store.open({ url: `sqlite:${file}` });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await store.write((em) => em.query('CREATE TABLE rows (id INTEGER PRIMARY KEY, pad TEXT)'));
  await store.read.query('PRAGMA wal_autocheckpoint = 0');
  let truncations = 0;
  const truncate = () => store.write(async (em) => void (truncations++, await em.query('PRAGMA wal_checkpoint(TRUNCATE)')));
  const checkpointer = WalCheckpointer.start(file, truncate, { intervalMs: 20, truncateAboveBytes: 500_000 });
  for (let i = 0; i < 100; i++) await store.write((em) => em.query('INSERT INTO rows (pad) VALUES (?)', ['x'.repeat(20_000)]));
  await until('the log to be emptied', () => truncations > 0 && size(`${file}-wal`) === 0);
  await checkpointer.stop();
  t.is((await store.read.query('SELECT COUNT(*) AS n FROM rows'))[0].n, 100);
  await store.close();
});

test('emptying the log never blocks the event loop while another connection still reads it', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-wal-'));
  const file = path.join(dir, 'test.db');
  const store = await Store.open({ url: `sqlite:${file}`, backgroundCheckpoints: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await store.write((em) => em.query('CREATE TABLE rows (id INTEGER PRIMARY KEY, pad TEXT)'));
  await store.write((em) => em.query('INSERT INTO rows (pad) VALUES (?)', ['x']));
  // A long read elsewhere (the export benchmark's bare script, a backup): its snapshot keeps the log.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require('better-sqlite3') as new (
    f: string,
    o: { readonly: boolean },
  ) => { exec(s: string): void; prepare(s: string): { get(): unknown }; close(): void };
  const reader = new Database(file, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT COUNT(*) FROM rows').get();
  // Counts the main connection's tries to empty the log (each one finds the log busy while it is read).
  const ds = store.read.dataSource;
  const query = ds.query.bind(ds);
  let tries = 0;
  ds.query = ((sql: string, ...rest: unknown[]) => {
    if (sql === 'PRAGMA wal_checkpoint(TRUNCATE)') tries++;
    return (query as (sql: string, ...rest: unknown[]) => Promise<unknown>)(sql, ...rest);
  }) as typeof ds.query;
  let last = Date.now();
  let longestGap = 0;
  const ticker = setInterval(() => {
    longestGap = Math.max(longestGap, Date.now() - last);
    last = Date.now();
  }, 10);
  // Past the default bound (64 MiB): the worker asks the main connection to empty the log.
  for (let i = 0; i < 70; i++) await store.write((em) => em.query('INSERT INTO rows (pad) VALUES (?)', ['x'.repeat(1024 * 1024)]));
  last = Date.now();
  longestGap = 0;
  const before = tries;
  await until('five tries to empty the log while it is read', () => tries >= before + 5);
  clearInterval(ticker);
  t.true(size(`${file}-wal`) > 64 * 1024 * 1024, 'the log stays while it is read');
  t.true(longestGap < 1000, `the event loop stood still for ${longestGap} ms`);
  reader.exec('COMMIT');
  reader.close();
  await until('the log to be emptied once the reader is done', () => size(`${file}-wal`) === 0);
  t.deepEqual(await store.read.query('PRAGMA busy_timeout'), [{ timeout: 5000 }]);
  await store.close();
});
