import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EntitySchema } from 'typeorm';
import { ENTITIES } from '../../../src/db/entities';
import { MIGRATIONS } from '../../../src/db/migrations';
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
