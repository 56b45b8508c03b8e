import { randomBytes } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { Client } from 'pg';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** A server that is not there refuses at once; a busy one (the whole suite on 2 cores) may take seconds to accept. */
const CONNECT_TIMEOUT_MS = 20_000;

/**
 * A fresh PostgreSQL database of this test's own (`ck_<random>`), dropped at the end. A server that
 * does not answer fails the test: a PostgreSQL test never passes without having run. Never touches
 * `test` itself.
 */
export async function tempPostgres(t: ExecutionContext): Promise<string> {
  const name = `ck_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    await admin.end().catch(() => undefined);
    throw new Error(`PostgreSQL at ${ADMIN_URL}: ${(err as Error).message} (the PostgreSQL tests need it: see docs/testing.md)`);
  }
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });
  return `postgres://postgres@127.0.0.1:5432/${name}`;
}
