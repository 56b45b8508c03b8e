import { randomBytes } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { Client } from 'pg';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A fresh PostgreSQL database of this test's own (`ck_<random>`), dropped at the end; null (with
 * the reason logged) when no server answers, so the caller can skip. Never touches `test` itself.
 */
export async function tempPostgres(t: ExecutionContext): Promise<string | null> {
  const name = `ck_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    t.log(`PostgreSQL skipped: ${(err as Error).message}`);
    await admin.end().catch(() => undefined);
    return null;
  }
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });
  return `postgres://postgres@127.0.0.1:5432/${name}`;
}
