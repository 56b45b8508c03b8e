import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EntitySchema } from 'typeorm';
import { ENTITIES } from '../../../src/db/entities';
import { MIGRATIONS } from '../../../src/db/migrations';
import { ArchivedScanAndSearch1767225600025 } from '../../../src/db/migrations/0025-archived-scan-and-search';
import { Store } from '../../../src/db/store';
import { tempPostgres } from '../../helpers/pg-database';

/**
 * The same migration test on SQLite and on PostgreSQL (a database of its own, `ck_<random>`):
 * every migration applies in order on an empty store, every entity's table exists with every
 * column the entity maps, and a second migrate applies nothing.
 */

async function checkMigrations(t: ExecutionContext, url: string): Promise<void> {
  const store = await Store.open({ url });
  try {
    t.true(await store.pendingMigrations());
    const applied = await store.migrate();
    t.deepEqual(applied, MIGRATIONS.map((m) => new m().name ?? m.name));
    t.false(await store.pendingMigrations());
    t.deepEqual(await store.migrate(), [], 'a second migrate is a no-op');

    const q = store.ds.createQueryRunner();
    try {
      for (const entity of ENTITIES as EntitySchema[]) {
        const meta = store.ds.getMetadata(entity);
        const table = await q.getTable(meta.tableName);
        t.truthy(table, `table ${meta.tableName} exists`);
        const have = new Set(table!.columns.map((c) => c.name));
        for (const c of meta.columns) t.true(have.has(c.databaseName), `${meta.tableName}.${c.databaseName} exists`);
      }
    } finally {
      await q.release();
    }
  } finally {
    await store.close();
  }
  // Reopening an up-to-date store changes nothing either.
  const again = await Store.open({ url });
  try {
    t.deepEqual(await again.migrate(), []);
  } finally {
    await again.close();
  }
}

test('all migrations up on SQLite; tables present; a second migrate is a no-op', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await checkMigrations(t, `sqlite:${path.join(dir, 'coinkeep.db')}`);
});

test('all migrations up on PostgreSQL; tables present; a second migrate is a no-op', async (t) => {
  const url = await tempPostgres(t);
  await checkMigrations(t, url);
});

/**
 * Migration 0025 on a store that has archived static addresses (watched in real time before it):
 * each gets its slow-scan row from the chain's cursor, its address row leaves the watched set, and
 * undoing the migration and applying it again comes back to the same.
 */
async function checkArchivedBackfill(t: ExecutionContext, url: string): Promise<void> {
  const store = await Store.open({ url });
  try {
    await store.migrate();
    const pg = store.dialect === 'postgres';
    const p = (i: number) => (pg ? `$${i}` : '?');
    const at = '2026-01-01T00:00:00.000Z';
    const rows: Array<[string, string]> = [['00000000-0000-4000-8000-000000000001', 'archived'], ['00000000-0000-4000-8000-000000000002', 'active']];
    for (const [id, status] of rows) {
      await store.ds.query(
        `INSERT INTO addresses (id, account_id, chain_id, coin_id, address, derivation_path, derivation_index, purpose, invoice_id, status, created_at, updated_at)
         VALUES (${p(1)}, ${p(2)}, 'ethereum', ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, 'static', NULL, 'active', ${p(7)}, ${p(8)})`,
        [id, 'acct', 'coin', `0x${id.slice(-4)}`, `m/${id.slice(-1)}`, Number(id.slice(-1)), at, at],
      );
      await store.ds.query(
        `INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at)
         VALUES (${p(1)}, 'acct', 'cust', 'coin', ${p(2)}, NULL, ${p(3)}, NULL, NULL, ${p(4)}, NULL, ${p(5)}, ${p(6)})`,
        [id, `0x${id.slice(-4)}`, status, at, at, at],
      );
    }
    await store.ds.query(`INSERT INTO chain_cursors (chain_id, height, hash, updated_at) VALUES ('ethereum', 77, '0xabc', ${p(1)})`, [at]);
    // Undone back to before 0025 (0028 gives its rows their address), then applied again.
    const since0025 = MIGRATIONS.map((m) => new m().name ?? m.name).slice(MIGRATIONS.indexOf(ArchivedScanAndSearch1767225600025));
    for (let i = 0; i < since0025.length; i++) await store.ds.undoLastMigration({ transaction: 'each' });
    t.deepEqual(await store.migrate(), since0025);
    t.true(since0025.includes('ArchivedScanAddressSearchMerge1767225600028'));
    const scans = await store.ds.query('SELECT address_id, chain_id, address, checked_height, rewatched_height FROM archived_scans');
    t.deepEqual(scans.map((r: any) => [r.address_id, r.chain_id, r.address, Number(r.checked_height), r.rewatched_height]), [[rows[0]![0], 'ethereum', `0x${rows[0]![0].slice(-4)}`, 77, null]]);
    const indexed = pg
      ? (await store.ds.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'archived_scans_chain'`))[0].indexdef
      : (await store.ds.query(`SELECT sql FROM sqlite_master WHERE name = 'archived_scans_chain'`))[0].sql;
    t.regex(indexed, /\(chain_id\)$/);
    const statuses = await store.ds.query('SELECT id, status FROM addresses ORDER BY id');
    t.deepEqual(statuses.map((r: any) => [r.id, r.status]), [[rows[0]![0], 'archived'], [rows[1]![0], 'active']]);
  } finally {
    await store.close();
  }
}

test('migrations 0025 and 0028 on SQLite give archived static addresses their slow-scan rows (with their address) from the chain cursor', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await checkArchivedBackfill(t, `sqlite:${path.join(dir, 'coinkeep.db')}`);
});

test('migrations 0025 and 0028 on PostgreSQL give archived static addresses their slow-scan rows (with their address) from the chain cursor', async (t) => {
  await checkArchivedBackfill(t, await tempPostgres(t));
});
