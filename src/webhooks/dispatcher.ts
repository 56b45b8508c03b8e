import { setMaxListeners } from 'node:events';
import type { EntityManager } from 'typeorm';
import type { EventRow } from '../db/entities/events';
import { WebhookAttemptEntity, WebhookDeliveryEntity, type DeliveryStatus, type WebhookAttemptRow } from '../db/entities/webhooks';
import { insertRow, placeholder } from '../db/raw';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { newId } from '../shared/ids';
import type { Logger } from '../shared/logger';
import type { CallbackSecrets } from './callback-secret';
import { fanOut } from './fan-out';
import { afterAttempt } from './schedule';
import type { WebhookSecrets } from './secrets';
import type { AttemptResult, WebhookSender } from './sender';

export interface DispatcherLimits {
  /** Attempts in flight across all targets. */
  maxInFlight: number;
  /** Attempts in flight to one target (an endpoint, or one invoice webhook_url). */
  perTarget: number;
}

export const DEFAULT_LIMITS: DispatcherLimits = { maxInFlight: 64, perTarget: 8 };

export const INTERRUPTED = 'interrupted: the daemon stopped during the attempt';
const FAN_OUT_BATCH = 500;
/** Due deliveries a scan queues per target; a target cut there is scanned again once its queue runs dry. */
const QUEUE_PER_TARGET = 32;
/** Targets a scan reads at most. */
const SCAN_LIMIT = 2000;

/** A due delivery as a scan reads it. */
interface DueDelivery {
  id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string | null;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  schedule_attempts: number;
  next_attempt_at: string;
}

/** A claimed attempt with what sending it needs, read in the claiming transaction. */
interface Claimed {
  delivery: DueDelivery;
  attempt: WebhookAttemptRow;
  /** The endpoint's sealed secret, or null for an invoice webhook_url. */
  sealedSecret: string | null;
  body: string;
}

interface Outcome {
  claimed: Claimed;
  result: AttemptResult;
  ended: Date;
}

const targetOf = (d: { endpoint_id: string | null; url: string }): string => d.endpoint_id ?? `url:${d.url}`;

/**
 * Sends deliveries from the store. Each attempt is claimed in the store before it is sent: the
 * claim counts it and already plans the next one as if it failed, so an attempt is never sent
 * twice, and a daemon that dies mid-attempt resumes at the planned time (at least once).
 *
 * A scan reads what is due, at most QUEUE_PER_TARGET per target, into queues per target; slots are
 * bounded overall and per target and filled from those queues, so one slow endpoint never holds
 * back the others. The store is scanned again when something may have fallen due: an outbox
 * emit, a retry, the one-second tick, or a target whose queue ran dry. Outcomes are written in
 * batches (one transaction for all that finished meanwhile).
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perTarget = new Map<string, number>();
  private queued = new Map<string, DueDelivery[]>();
  /** Targets whose scan was cut at QUEUE_PER_TARGET: more of theirs may be due. */
  private cut = new Set<string>();
  private readonly abort = new AbortController();
  private pumping: Promise<void> | null = null;
  private again = false;
  private stale = true;
  private outboxDirty = true;
  private outcomes: Outcome[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      store: Store;
      clock: Clock;
      logger: Logger;
      sender: WebhookSender;
      secrets: WebhookSecrets;
      callbackSecrets: CallbackSecrets;
    },
    private readonly limits: DispatcherLimits = DEFAULT_LIMITS,
  ) {
    // Every attempt in flight listens to the one stop signal.
    setMaxListeners(0, this.abort.signal);
  }

  /** The outbox has new rows: fans them out soon (and scans only if that made deliveries). Fire and forget. */
  wake(): void {
    this.outboxDirty = true;
    this.pump().catch((err: unknown) => this.logFailure(err));
  }

  /** A delivery was queued again (retry, replay): scans soon. Fire and forget. */
  rescan(): void {
    this.tick().catch((err: unknown) => this.logFailure(err));
  }

  private logFailure(err: unknown): void {
    this.deps.logger.error('webhook dispatch failed', { error: err instanceof Error ? err.message : String(err) });
  }

  /** Fans out new outbox rows, scans what is due and starts it; resolves when that pass is done. */
  tick(): Promise<void> {
    this.stale = true;
    this.outboxDirty = true;
    return this.pump();
  }

  /** One pass at a time; a call during a pass runs another after it. */
  private pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      do {
        this.again = false;
        if (this.abort.signal.aborted) return;
        if (this.outboxDirty) {
          this.outboxDirty = false;
          if (await this.fanOutNew()) this.stale = true;
        }
        if (this.stale || this.runDry()) {
          this.stale = false;
          await this.scan();
        }
        await this.startQueued();
      } while (this.again);
    })().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  /** Resolves once no pass runs, no attempt is in flight and every outcome is written (tests and benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.outcomes.length > 0) void this.flush();
      if (!this.pumping && !this.flushing && this.inFlight.size === 0) return;
      await Promise.allSettled([this.pumping, this.flushing, ...this.inFlight.values()]);
    }
  }

  /**
   * At start: attempts a previous run left unfinished are recorded as interrupted, and their
   * deliveries move on as after a failure (the claim already planned the next attempt).
   */
  async recoverInterrupted(): Promise<number> {
    const now = iso(this.deps.clock.now());
    return this.deps.store.write(async (em) => {
      const open = await em.createQueryBuilder(WebhookAttemptEntity, 'a').where('a.finished_at IS NULL').getMany();
      for (const a of open) {
        await em.update(WebhookAttemptEntity, { id: a.id }, { finished_at: now, error: INTERRUPTED });
        const d = await em.findOne(WebhookDeliveryEntity, { where: { id: a.delivery_id } });
        if (!d || d.status !== 'pending' || d.attempts !== a.number) continue;
        const status: DeliveryStatus = d.next_attempt_at === null ? 'exhausted' : 'failed';
        await em.update(WebhookDeliveryEntity, { id: d.id }, { status, last_response_status: null, last_error: INTERRUPTED, updated_at: now });
      }
      return open.length;
    });
  }

  /** Stops: no new attempts; those in flight are cut short and recorded. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.pumping?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight.values()]);
    await this.flush();
    this.deps.sender.close();
  }

  /** True when new deliveries were made. */
  private async fanOutNew(): Promise<boolean> {
    let made = false;
    for (;;) {
      const events: Array<Omit<EventRow, 'body'>> = await this.deps.store.read.query(
        `SELECT id, seq, account_id, type, object_id, callback_url, created_at, dispatched_at FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ${FAN_OUT_BATCH}`,
      );
      if (events.length === 0) return made;
      const deliveries = await this.deps.store.write((em) => fanOut(em, events, iso(this.deps.clock.now()), this.deps.callbackSecrets));
      made ||= deliveries.length > 0;
      if (events.length < FAN_OUT_BATCH) return made;
    }
  }

  /** A target with room whose queue ran dry but whose last scan was cut: it may have more due. */
  private runDry(): boolean {
    for (const t of this.cut) {
      if ((this.queued.get(t)?.length ?? 0) === 0 && (this.perTarget.get(t) ?? 0) < this.limits.perTarget) return true;
    }
    return false;
  }

  /** Reads what is due now into the queues: the earliest QUEUE_PER_TARGET of each target, oldest first. */
  private async scan(): Promise<void> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    const rows: DueDelivery[] = await em.query(
      `SELECT id, account_id, event_id, event_type, endpoint_id, url, status, attempts, schedule_attempts, next_attempt_at FROM (
         SELECT d.*, ROW_NUMBER() OVER (PARTITION BY COALESCE(d.endpoint_id, d.url) ORDER BY d.next_attempt_at, d.id) AS rn
         FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= ${p(1)} AND (d.endpoint_id IS NULL OR e.enabled = ${p(2)})
       ) due WHERE rn <= ${p(3)} ORDER BY next_attempt_at, id LIMIT ${p(4)}`,
      [iso(this.deps.clock.now()), em.connection.options.type === 'postgres' ? true : 1, QUEUE_PER_TARGET, SCAN_LIMIT],
    );
    const queued = new Map<string, DueDelivery[]>();
    for (const r of rows) {
      const t = targetOf(r);
      const list = queued.get(t) ?? [];
      list.push({ ...r, attempts: Number(r.attempts), schedule_attempts: Number(r.schedule_attempts) });
      queued.set(t, list);
    }
    this.queued = queued;
    this.cut = new Set([...queued].filter(([, list]) => list.length >= QUEUE_PER_TARGET).map(([t]) => t));
  }

  /** Fills free slots from the queues, each target up to its bound, and claims them in one transaction. */
  private async startQueued(): Promise<void> {
    let free = this.limits.maxInFlight - this.inFlight.size;
    if (free <= 0 || this.abort.signal.aborted) return;
    const chosen: DueDelivery[] = [];
    for (const [t, list] of this.queued) {
      const room = Math.min(free, this.limits.perTarget - (this.perTarget.get(t) ?? 0));
      if (room <= 0) continue;
      const taken = list.splice(0, room);
      chosen.push(...taken);
      free -= taken.length;
      if (list.length === 0) this.queued.delete(t);
      if (free <= 0) break;
    }
    if (chosen.length === 0) return;
    const claimed = await this.claim(chosen, this.deps.clock.now());
    if (claimed.length < chosen.length) this.stale = true;
    for (const c of claimed) this.launch(c);
  }

  /**
   * Counts and plans each attempt in the store before anything is sent (rows changed meanwhile
   * are skipped), and reads the endpoint's current URL and secret and the event's body.
   */
  private claim(due: DueDelivery[], now: Date): Promise<Claimed[]> {
    const at = iso(now);
    return this.deps.store.write(async (em) => {
      // Outcomes that finished meanwhile ride along: one transaction instead of two.
      await this.recordQueued(em);
      const p = (i: number) => placeholder(em, i);
      const endpointIds = [...new Set(due.map((d) => d.endpoint_id).filter((id): id is string => id !== null))];
      const endpoints = new Map<string, { url: string; secret_sealed: string; enabled: boolean | number }>();
      if (endpointIds.length > 0) {
        const rows: Array<{ id: string; url: string; secret_sealed: string; enabled: boolean | number }> = await em.query(
          `SELECT id, url, secret_sealed, enabled FROM webhook_endpoints WHERE id IN (${endpointIds.map((_, i) => p(i + 1)).join(', ')})`,
          endpointIds,
        );
        for (const r of rows) endpoints.set(r.id, r);
      }
      const eventIds = [...new Set(due.map((d) => d.event_id))];
      const events: Array<{ id: string; body: string }> = await em.query(
        `SELECT id, body FROM events WHERE id IN (${eventIds.map((_, i) => p(i + 1)).join(', ')})`,
        eventIds,
      );
      const bodies = new Map(events.map((e) => [e.id, e.body]));

      const claimed: Claimed[] = [];
      for (const d of due) {
        const endpoint = d.endpoint_id === null ? null : endpoints.get(d.endpoint_id);
        if (endpoint === undefined || (endpoint !== null && !endpoint.enabled)) continue;
        const url = endpoint?.url ?? d.url;
        const number = d.schedule_attempts + 1;
        const res = await em.queryRunner!.query(
          `UPDATE webhook_deliveries SET status = 'pending', attempts = ${p(1)}, schedule_attempts = ${p(2)}, next_attempt_at = ${p(3)}, url = ${p(4)}, updated_at = ${p(5)}
           WHERE id = ${p(6)} AND status = ${p(7)} AND next_attempt_at = ${p(8)} AND attempts = ${p(9)}`,
          [d.attempts + 1, number, afterAttempt(number, false, now).next_attempt_at, url, at, d.id, d.status, d.next_attempt_at, d.attempts],
          true,
        );
        if (res.affected !== 1) continue;
        const attempt: WebhookAttemptRow = {
          id: newId(),
          delivery_id: d.id,
          number: d.attempts + 1,
          url,
          started_at: at,
          finished_at: null,
          response_status: null,
          error: null,
          duration_ms: null,
        };
        await insertRow(em, 'webhook_attempts', attempt);
        claimed.push({ delivery: { ...d, url, schedule_attempts: number }, attempt, sealedSecret: endpoint?.secret_sealed ?? null, body: bodies.get(d.event_id)! });
      }
      return claimed;
    });
  }

  private launch(c: Claimed): void {
    const d = c.delivery;
    const target = targetOf(d);
    this.perTarget.set(target, (this.perTarget.get(target) ?? 0) + 1);
    const run = this.send(c)
      .then((result) => {
        this.outcomes.push({ claimed: c, result, ended: this.deps.clock.now() });
        // Written by the next claim, or by a flush when nothing is claimed soon.
        setImmediate(() => void this.flush());
      })
      .catch((err: unknown) => this.deps.logger.error('webhook attempt failed', { delivery_id: d.id, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        // The slot frees as soon as the answer is in: the claim keeps the delivery from being due
        // again, so the next attempt need not wait for this outcome's write.
        this.inFlight.delete(d.id);
        const left = (this.perTarget.get(target) ?? 1) - 1;
        if (left > 0) this.perTarget.set(target, left);
        else this.perTarget.delete(target);
        if (!this.abort.signal.aborted) void this.pump().catch(() => undefined);
      });
    this.inFlight.set(d.id, run);
  }

  private async send(c: Claimed): Promise<AttemptResult> {
    const d = c.delivery;
    const secret =
      d.endpoint_id !== null && c.sealedSecret !== null
        ? this.deps.secrets.openEndpoint(d.endpoint_id, c.sealedSecret)
        : await this.deps.callbackSecrets.secretFor(d.account_id);
    return this.deps.sender.post(d.url, { id: d.event_id, type: d.event_type, body: c.body }, secret, this.deps.clock.now(), this.abort.signal);
  }

  private async recordQueued(em: EntityManager): Promise<void> {
    const batch = this.outcomes;
    this.outcomes = [];
    for (const o of batch) await record(em, o);
  }

  /** Writes the queued outcomes, one transaction for all that finished meanwhile. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      while (this.outcomes.length > 0) await this.deps.store.write((em) => this.recordQueued(em));
    })()
      .catch((err: unknown) => this.deps.logger.error('webhook outcomes not recorded', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }
}

/** An attempt's result, and where its delivery goes next. */
async function record(em: EntityManager, { claimed: { delivery: d, attempt }, result, ended }: Outcome): Promise<void> {
  const p = (i: number) => placeholder(em, i);
  const at = iso(ended);
  await em.query(
    `UPDATE webhook_attempts SET finished_at = ${p(1)}, response_status = ${p(2)}, error = ${p(3)}, duration_ms = ${p(4)} WHERE id = ${p(5)}`,
    [at, result.responseStatus, result.error, result.durationMs, attempt.id],
  );
  const next = afterAttempt(d.schedule_attempts, result.ok, ended);
  await em.query(
    `UPDATE webhook_deliveries SET status = ${p(1)}, next_attempt_at = ${p(2)}, last_response_status = ${p(3)}, last_error = ${p(4)}, updated_at = ${p(5)}
     WHERE id = ${p(6)} AND status = 'pending' AND attempts = ${p(7)}`,
    [next.status, next.next_attempt_at, result.responseStatus, result.error, at, d.id, attempt.number],
  );
}
