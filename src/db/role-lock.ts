import { createHash } from 'node:crypto';
import type { Client } from 'pg';

/**
 * Roles that must run once however many daemons share the database (ARCHITECTURE "Run once"): a
 * chain's scanner, a chain's payout worker. A job asks `hold(role)` before each run and does the
 * role's work only while it answers true.
 */
export interface RoleLock {
  /**
   * Whether this daemon holds `role` now, taking it when no other daemon holds it. Throws when the
   * database cannot be asked (the caller then holds nothing).
   */
  hold(role: string): Promise<boolean>;
  close(): Promise<void>;
}

/** SQLite: one daemon opens the database, and it holds every role. */
export const soleDaemon: RoleLock = {
  hold: async () => true,
  close: async () => undefined,
};

/** How long a question on the lock's connection may take before the roles are given up. */
const QUERY_TIMEOUT_MS = 5000;
/**
 * Keepalives of the lock's session (seconds): a holder whose host or network is gone, so whose
 * connection never closes, is dropped by the server after about idle + interval x count (or, with
 * an answer unacknowledged, after the same time in all), and its roles go to another daemon.
 */
const KEEPALIVE = { idle: 5, interval: 2, count: 3 };
const USER_TIMEOUT_MS = (KEEPALIVE.idle + KEEPALIVE.interval * KEEPALIVE.count) * 1000;

/**
 * PostgreSQL: each role is a session-level advisory lock, all of them on one connection of the
 * daemon's own (never the pool's: a pooled connection is shared, and a session lock lives as long as
 * its session). A daemon that dies closes the connection and the server releases its locks at once;
 * another daemon takes a role at its next `hold`. Asking for a role already held is a round trip on
 * the connection: a lost connection (an error, a time-out) gives up every role, and the session is
 * ended so the server releases them too.
 */
export class PostgresRoleLock implements RoleLock {
  /** The lock's session, connected or on its way; null before the first role and after a loss. */
  private session: { client: Client; ready: Promise<void> } | null = null;
  private readonly held = new Set<string>();

  constructor(private readonly url: string) {}

  async hold(role: string): Promise<boolean> {
    const session = (this.session ??= this.connect());
    try {
      await session.ready;
      if (this.held.has(role)) {
        await session.client.query('SELECT 1');
        return this.held.has(role);
      }
      const { rows } = await session.client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS held', [lockKey(role)]);
      if (rows[0]!.held && this.session === session) this.held.add(role);
      return rows[0]!.held && this.session === session;
    } catch (err) {
      await this.drop(session);
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.session) await this.drop(this.session);
  }

  private connect(): { client: Client; ready: Promise<void> } {
    // Loaded with the first PostgreSQL session: a SQLite daemon never needs the driver.
    const { Client } = require('pg') as typeof import('pg');
    const client = new Client({
      connectionString: this.url,
      application_name: 'coinkeep roles',
      connectionTimeoutMillis: QUERY_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    const session = {
      client,
      ready: client
        .connect()
        .then(() =>
          client.query(
            `SET tcp_keepalives_idle = ${KEEPALIVE.idle}; SET tcp_keepalives_interval = ${KEEPALIVE.interval}; ` +
              `SET tcp_keepalives_count = ${KEEPALIVE.count}; SET tcp_user_timeout = ${USER_TIMEOUT_MS}`,
          ),
        )
        .then(() => undefined),
    };
    // An error between questions (the server gone, the session ended): every role is lost.
    client.on('error', () => void this.drop(session));
    return session;
  }

  /** Ends the session (the server releases its locks) and forgets every role held on it. */
  private async drop(session: { client: Client; ready: Promise<void> }): Promise<void> {
    if (this.session !== session) return;
    this.session = null;
    this.held.clear();
    await session.client.end().catch(() => undefined);
  }
}

/** A role's advisory lock key: 64 bits of a hash of its name, in a namespace of Coinkeep's own. */
function lockKey(role: string): string {
  return createHash('sha256').update(`coinkeep role ${role}`).digest().readBigInt64BE(0).toString();
}
