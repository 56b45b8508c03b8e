import { createHash } from 'node:crypto';
import { IdempotencyEntity, type IdempotencyRow } from '../db/entities/auth';
import type { Sealer } from '../db/seal';
import { isUniqueViolation } from '../db/raw';
import { cells } from '../db/sealed-values';
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

/** The request's Idempotency-Key (SPEC rule 1), null when none was sent; a malformed one is validation_error. */
export function idempotencyKeyOf(ctx: AppContext): string | null {
  const key = ctx.get('Idempotency-Key');
  if (key === '') return null;
  if (!KEY_RE.test(key)) throw validationError('Idempotency-Key', 'Idempotency-Key must be 1 to 128 printable ASCII characters');
  return key;
}

/** Which scope a request's key lives in, and for how long (null: permanently). */
export type IdempotencyScope = (ctx: AppContext) => { scope: string; ttlMs: number | null };

/** The transaction a store write hands its function. */
type Tx = Parameters<Parameters<Store['write']>[0]>[0];

/** What a finished request left for its duplicates: an answer to replay, or its key given back. */
type Outcome = { status: number; body: unknown } | 'released';

/**
 * SPEC "Idempotency (POST)" 1–6. The key is claimed (state in_progress) before the handler runs;
 * 2xx and 5xx answers are stored, sealed under the master key (they may carry a secret), and
 * replayed with `Idempotent-Replayed: true`; a 4xx, or a 503 `unavailable` refused before writing,
 * releases the key, and a duplicate waiting for it then claims it and runs. A duplicate arriving
 * while the first runs waits briefly for it, then answers 409 `idempotency.in_progress`. Scopes are
 * strings so the withdrawals issue can bind keys per merchant, permanently.
 */
export class Idempotency {
  private readonly inflight = new Map<string, Promise<Outcome>>();
  /**
   * Answers of requests that ran but whose settle failed to write: the request's own writes are
   * committed, so its answer is the truth. They are replayed from here and written by the upkeep.
   */
  private readonly unsettled = new Map<string, { scope: string; key: string; status: number; body: unknown }>();

  constructor(
    private readonly store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Claims of requests that will never finish become stored 500s, replayed like any 5xx. At start on
   * SQLite every claim is one (this daemon alone owns the database); on PostgreSQL other daemons may
   * be mid-request, so there, and in the periodic upkeep, only claims older than ABANDONED_AFTER_MS.
   * Claims whose request ran here are settled first from the answer it gave.
   */
  async recoverAbandoned(opts: { atStart: boolean }): Promise<void> {
    for (const [id, a] of this.unsettled) {
      await this.store.write((em) => this.storeAnswer(em, a.scope, a.key, a.status, a.body));
      this.unsettled.delete(id);
    }
    const everyClaim = opts.atStart && this.store.dialect !== 'postgres';
    const cutoff = new Date(this.clock.now().getTime() - (everyClaim ? 0 : ABANDONED_AFTER_MS)).toISOString();
    const body = new ApiError(500, 'internal_error', 'the request was interrupted; it may or may not have been applied').toBody();
    await this.store.write(async (em) => {
      const claims = await em.createQueryBuilder(IdempotencyEntity, 'i').where("i.state = 'in_progress' AND i.created_at <= :cutoff", { cutoff }).getMany();
      for (const c of claims) await this.storeAnswer(em, c.scope, c.key, 500, body);
    });
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
      if (ctx.method !== 'POST') return next();
      const key = idempotencyKeyOf(ctx);
      if (key === null) return next();
      const { scope, ttlMs } = scopeOf(ctx);
      const fingerprint = createHash('sha256').update(`${ctx.method}\n${ctx.originalUrl}\n`).update(ctx.state.rawBody).digest('hex');
      const id = `${scope}\u0000${key}`;

      const claimed = await this.claim(scope, key, fingerprint, ttlMs, id);
      if (claimed !== true) return this.replay(ctx, claimed);

      let finished!: (o: Outcome) => void;
      this.inflight.set(id, new Promise<Outcome>((r) => (finished = r)));
      let outcome: Outcome = 'released';
      try {
        try {
          await next();
        } catch (err) {
          respondWithError(ctx, err, this.logger);
        }
        outcome = await this.settle(ctx, scope, key, id);
      } finally {
        this.inflight.delete(id);
        finished(outcome);
      }
    };
  }

  /** true when this request now owns the key; otherwise the answer to replay. */
  private async claim(scope: string, key: string, fingerprint: string, ttlMs: number | null, id: string): Promise<true | { status: number; body: unknown }> {
    let raced = 0;
    for (;;) {
      const now = this.clock.now();
      const outcome = await this.store
        .write(async (em) => {
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
        })
        .catch((err: unknown) => {
          // A concurrent claim won the primary key (PostgreSQL): read what it stored.
          if (isUniqueViolation(err) && ++raced < 3) return null;
          throw err;
        });
      if (outcome === null) continue;
      if (outcome === true) return true;
      if (outcome.fingerprint !== fingerprint) {
        throw new ApiError(422, 'idempotency.mismatch', 'this Idempotency-Key was used for a different request');
      }
      if (outcome.state === 'done') return this.answerOf(outcome);
      const settled = this.unsettled.get(id) ?? (await this.waitFor(id, scope, key));
      // The first request gave its key back (4xx): this one claims it and runs.
      if (settled === 'released') continue;
      if (settled) return settled;
      throw new ApiError(409, 'idempotency.in_progress', 'a request with this Idempotency-Key is still being processed');
    }
  }

  private async waitFor(id: string, scope: string, key: string): Promise<Outcome | null> {
    const deadline = Date.now() + IN_PROGRESS_WAIT_MS;
    while (Date.now() < deadline) {
      const local = this.inflight.get(id);
      if (local) {
        const outcome = await Promise.race([local, new Promise<null>((r) => setTimeout(() => r(null), deadline - Date.now()))]);
        if (outcome) return outcome;
      } else {
        await new Promise((r) => setTimeout(r, 50));
      }
      const row = await this.store.read.findOneBy(IdempotencyEntity, { scope, key });
      if (!row) return 'released';
      if (row.state === 'done') return this.answerOf(row);
    }
    return null;
  }

  /**
   * Stores the answer, or releases the key. The request's own writes are already committed, so
   * when storing fails its answer still goes out and is kept for the upkeep to write.
   */
  private async settle(ctx: AppContext, scope: string, key: string, id: string): Promise<Outcome> {
    const status = ctx.status;
    const body = ctx.body as { error?: { code?: string } } | undefined;
    const release = (status >= 400 && status < 500) || (status === 503 && body?.error?.code === 'unavailable');
    const write = () =>
      this.store.write(async (em) => {
        if (release) await em.delete(IdempotencyEntity, { scope, key });
        else await this.storeAnswer(em, scope, key, status, body ?? null);
      });
    try {
      await write().catch(write);
    } catch (err) {
      if (release) throw err;
      this.logger.error('storing an idempotent answer failed twice; it is kept to be stored by the upkeep', {
        error: err instanceof Error ? err.message : String(err),
      });
      this.unsettled.set(id, { scope, key, status, body: body ?? null });
    }
    return release ? 'released' : { status, body: body ?? null };
  }

  private async storeAnswer(em: Tx, scope: string, key: string, status: number, body: unknown): Promise<void> {
    const sealed = this.sealer.seal(JSON.stringify(body), cells.storedAnswer(scope, key));
    await em
      .createQueryBuilder()
      .update(IdempotencyEntity)
      .set({ state: 'done', response_status: status, response_body: sealed })
      .where("scope = :scope AND key = :key AND state = 'in_progress'", { scope, key })
      .execute();
  }

  private answerOf(row: IdempotencyRow): { status: number; body: unknown } {
    const body = row.response_body === null ? null : (JSON.parse(this.sealer.open(row.response_body, cells.storedAnswer(row.scope, row.key))) as unknown);
    return { status: row.response_status ?? 500, body };
  }

  private replay(ctx: AppContext, answer: { status: number; body: unknown }): void {
    ctx.status = answer.status;
    ctx.body = answer.body;
    ctx.set('Idempotent-Replayed', 'true');
  }
}
