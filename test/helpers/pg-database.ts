import { randomBytes } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import { Client } from 'pg';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
/** A server that is not there refuses at once; a busy one (the whole suite on 2 cores) may take seconds to accept. */
const CONNECT_TIMEOUT_MS = 20_000;
/** Connection attempts that may time out before a test fails on it. */
const CONNECT_ATTEMPTS = 3;

/** A PostgreSQL database of a test's or a run's own, and how to drop it. */
export interface PostgresDatabase {
  url: string;
  /** Drops the database (the connections still open to it included); never throws. */
  drop(): Promise<void>;
}

/**
 * A fresh PostgreSQL database (`ck_<random>`) that the caller drops: the simulator's (it may keep
 * one as evidence) and tempPostgres's. A server that does not answer is an error naming
 * docs/testing.md. Never touches `test` itself.
 */
export async function createPostgres(): Promise<PostgresDatabase> {
  const name = `ck_${randomBytes(6).toString('hex')}`;
  // A connection that times out is tried again (a server busy with the suite's other databases, seen
  // at load 8 in a CI rehearsal); a refusal or any other error fails at once.
  for (let attempt = 1; ; attempt++) {
    const admin = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    try {
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      break;
    } catch (err) {
      const message = (err as Error).message;
      if (attempt < CONNECT_ATTEMPTS && /timeout/i.test(message)) continue;
      throw new Error(`PostgreSQL at ${ADMIN_URL}: ${message} (the PostgreSQL tests need it: see docs/testing.md)`);
    } finally {
      await admin.end().catch(() => undefined);
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:5432/${name}`,
    drop: async () => {
      // A connection of its own: a simulation may run an hour between the two.
      const c = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      try {
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } catch {
        /* gone already, or the server is: nothing to drop */
      } finally {
        await c.end().catch(() => undefined);
      }
    },
  };
}

/**
 * A fresh PostgreSQL database of this test's own, dropped at the end. A server that does not
 * answer fails the test: a PostgreSQL test never passes without having run.
 */
export async function tempPostgres(t: ExecutionContext): Promise<string> {
  const db = await createPostgres();
  t.teardown(() => db.drop());
  return db.url;
}
