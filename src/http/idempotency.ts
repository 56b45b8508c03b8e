import { createHash } from 'node:crypto';
import { IdempotencyEntity, type IdempotencyRow } from '../db/entities/auth';
import type { Store } from '../db/store';
import { ApiError, validationError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { respondWithError } from './app';
import type { AppContext, AppMiddleware } from './context';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** How long a duplicate waits for the first request to finish before answering 409 in_progress. */
export const IN_PROGRESS_WAIT_MS = 2000;
/** A claim this old belongs to a request that will never finish: its daemon died, or it hangs. */
export const ABANDONED_AFTER_MS = 10 * 60 * 1000;
const KEY_RE = /^[\x20-\x7e]{1,128}$/;

/** Which scope a request's key lives in, and for how long (null: permanently). */
export type IdempotencyScope = (ctx: AppContext) => { scope: string; ttlMs: number | null };

/**
 * SPEC "Idempotency (POST)" 1–6. The key is claimed (state in_progress) before the handler runs;
 * 2xx and 5xx answers are stored and replayed with `Idempotent-Replayed: true`; a 4xx, or a 503
 * `unavailable` refused before writing, releases the key. A duplicate arriving while the first runs
 * waits briefly for it, then answers 409 `idempotency.in_progress`. Scopes are strings so the
 * withdrawals issue can bind keys per merchant, permanently.
 */
export class Idempotency {
  private readonly inflight = new Map<string, Promise<void>>();

  constructor(private readonly store: Store, private readonly clock: Clock, private readonly logger: Logger) {}

  /**
   * Claims of requests that will never finish become stored 500s, replayed like any 5xx. At start on
   * SQLite every claim is one (this daemon alone owns the database); on PostgreSQL other daemons may
   * be mid-request, so there, and in the periodic upkeep, only claims older than ABANDONED_AFTER_MS.
   */
  async recoverAbandoned(opts: { atStart: boolean }): Promise<void> {
    const everyClaim = opts.atStart && this.store.dialect !== 'postgres';
    const cutoff = new Date(this.clock.now().getTime() - (everyClaim ? 0 : ABANDONED_AFTER_MS)).toISOString();
    const body = JSON.stringify(new ApiError(500, 'internal_error', 'the request was interrupted; it may or may not have been applied').toBody());
    await this.store.write((em) =>
      em
        .createQueryBuilder()
        .update(IdempotencyEntity)
        .set({ state: 'done', response_status: 500, response_body: body })
        .where("state = 'in_progress' AND created_at <= :cutoff", { cutoff })
        .execute(),
    );
  }

  /** The periodic job: abandoned claims answered, expired keys forgotten. */
  async upkeep(): Promise<void> {
    await this.recoverAbandoned({ atStart: false });
    await this.purgeExpired();
  }

  async purgeExpired(): Promise<void> {
    const now = this.clock.now().toISOString();
    await this.store.write((em) =>
      em.createQueryBuilder().delete().from(IdempotencyEntity).where('expires_at IS NOT NULL AND expires_at < :now', { now }).execute(),
    );
  }

  middleware(scopeOf: IdempotencyScope): AppMiddleware {
    return async (ctx, next) => {
      const key = ctx.get('Idempotency-Key');
      if (ctx.method !== 'POST' || key === '') return next();
      if (!KEY_RE.test(key)) throw validationError('Idempotency-Key', 'Idempotency-Key must be 1 to 128 printable ASCII characters');
      const { scope, ttlMs } = scopeOf(ctx);
      const fingerprint = createHash('sha256')
        .update(`${ctx.method}\n${ctx.originalUrl}\n`)
        .update(ctx.state.rawBody)
        .digest('hex');
      const id = `${scope}\u0000${key}`;

      const claimed = await this.claim(scope, key, fingerprint, ttlMs, id);
      if (claimed !== true) return this.replay(ctx, claimed);

      let finished!: () => void;
      this.inflight.set(id, new Promise<void>((r) => (finished = r)));
      try {
        try {
          await next();
        } catch (err) {
          respondWithError(ctx, err, this.logger);
        }
        await this.settle(ctx, scope, key);
      } finally {
        this.inflight.delete(id);
        finished();
      }
    };
  }

  /** true when this request now owns the key; otherwise the stored row to replay. */
  private async claim(scope: string, key: string, fingerprint: string, ttlMs: number | null, id: string): Promise<true | IdempotencyRow> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const outcome = await this.store.write(async (em) => {
        const row = await em.findOneBy(IdempotencyEntity, { scope, key });
        if (row && row.expires_at !== null && row.expires_at < now.toISOString()) {
          await em.delete(IdempotencyEntity, { scope, key });
        } else if (row) {
          return row;
        }
        await em.insert(IdempotencyEntity, {
          scope,
          key,
          fingerprint,
          state: 'in_progress',
          response_status: null,
          response_body: null,
          created_at: now.toISOString(),
          expires_at: ttlMs === null ? null : new Date(now.getTime() + ttlMs).toISOString(),
        });
        return true as const;
      }).catch((err: unknown) => {
        // A concurrent claim won the primary key (PostgreSQL): read what it stored.
        if (isUniqueViolation(err)) return null;
        throw err;
      });
      if (outcome === null) continue;
      if (outcome === true) return true;
      if (outcome.fingerprint !== fingerprint) {
        throw new ApiError(422, 'idempotency.mismatch', 'this Idempotency-Key was used for a different request');
      }
      if (outcome.state === 'done') return outcome;
      const settled = await this.waitFor(id, scope, key);
      if (settled) return settled;
      throw new ApiError(409, 'idempotency.in_progress', 'a request with this Idempotency-Key is still being processed');
    }
    throw new ApiError(409, 'idempotency.in_progress', 'a request with this Idempotency-Key is still being processed');
  }

  private async waitFor(id: string, scope: string, key: string): Promise<IdempotencyRow | null> {
    const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
    while (Date.now() < deadline) {
      const local = this.inflight.get(id);
      if (local) await Promise.race([local, new Promise((r) => setTimeout(r, deadline - Date.now()))]);
      else await new Promise((r) => setTimeout(r, 50));
      const row = await this.store.read.findOneBy(IdempotencyEntity, { scope, key });
      if (!row) return null;
      if (row.state === 'done') return row;
    }
    return null;
  }

  private async settle(ctx: AppContext, scope: string, key: string): Promise<void> {
    const status = ctx.status;
    const body = ctx.body as { error?: { code?: string } } | undefined;
    const release = (status >= 400 && status < 500) || (status === 503 && body?.error?.code === 'unavailable');
    await this.store.write(async (em) => {
      if (release) await em.delete(IdempotencyEntity, { scope, key });
      else await em.update(IdempotencyEntity, { scope, key }, { state: 'done', response_status: status, response_body: JSON.stringify(body ?? null) });
    });
  }

  private replay(ctx: AppContext, row: IdempotencyRow): void {
    ctx.status = row.response_status ?? 500;
    ctx.body = JSON.parse(row.response_body ?? 'null') as unknown;
    ctx.set('Idempotent-Replayed', 'true');
  }
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = e.driverError?.code ?? e.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
