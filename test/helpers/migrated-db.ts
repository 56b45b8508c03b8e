import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Store } from '../../src/db/store';

const MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'src', 'db', 'migrations');

/**
 * A SQLite database with every migration applied, made once per machine and set of migrations (a
 * hash of their compiled files names it) and copied for each test daemon started by
 * startPreparedDaemon: migrating a fresh database cost about 0.12-0.17 s of CPU per daemon start,
 * an opened migrated one about 0.015 s. The migrations themselves are still run by every daemon
 * the CLI starts (coinkeepd, the sandbox, the simulator) and by the migration tests. Made in a
 * directory of its own and renamed into place whole, so files starting at once never copy half of one.
 */
export function migratedDatabase(): Promise<string> {
  made ??= makeMigratedDatabase();
  return made;
}
let made: Promise<string> | undefined;

async function makeMigratedDatabase(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS_DIR)
    .filter((n) => n.endsWith('.js'))
    .sort())
    hash.update(name).update(readFileSync(path.join(MIGRATIONS_DIR, name)));
  const file = path.join(os.tmpdir(), `coinkeep-migrated-${hash.digest('hex').slice(0, 16)}.db`);
  if (existsSync(file)) return file;
  const work = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-migrating-'));
  try {
    const store = await Store.open({ url: `sqlite:${path.join(work, 'coinkeep.db')}` });
    await store.migrate();
    // The last connection closed: the log is checkpointed into the file and removed.
    await store.ds.destroy();
    renameSync(path.join(work, 'coinkeep.db'), file);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return file;
}

/** Puts a migrated database at a SQLite `database.url` that has none yet; anything else is left alone. */
export async function placeMigratedDatabase(databaseUrl: string): Promise<void> {
  if (!databaseUrl.startsWith('sqlite:')) return;
  const file = databaseUrl.slice('sqlite:'.length);
  if (file === ':memory:' || existsSync(file)) return;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  copyFileSync(await migratedDatabase(), file);
  chmodSync(file, 0o600);
}
