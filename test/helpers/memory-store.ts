import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { Store } from '../../src/db/store';

/** A migrated SQLite store in a temp dir, closed and removed when the test ends. */
export async function tempStore(t: ExecutionContext): Promise<Store> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-store-'));
  const store = await Store.open({ url: `sqlite:${path.join(dir, 'test.db')}` });
  await store.migrate();
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}
