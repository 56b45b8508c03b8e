import { setMaxListeners } from 'node:events';
import type { EntityManager } from 'typeorm';
import type { EventRow } from '../db/entities/events';
import { WebhookAttemptEntity, WebhookDeliveryEntity, type DeliveryStatus, type WebhookAttemptRow } from '../db/entities/webhooks';
import { placeholder } from '../db/raw';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { newId } from '../shared/ids';
import type { Logger } from '../shared/logger';
import type { CallbackSecrets } from './callback-secret';
import { fanOut } from './fan-out';
import { afterAttempt, MAX_ATTEMPTS } from './schedule';
import { insertRows, list, returning, updateFromValues } from './sql';
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
const QUEUE_PER_TARGET = 64;
const DUE_COLUMNS = 'id, account_id, event_id, event_type, endpoint_id, url, status, attempts, schedule_attempts, next_attempt_at';
/** How long a finished attempt's outcome waits for a claim's transaction to carry it. */
const FLUSH_AFTER_MS = 5;
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
  /** As it was before the claim (a claim not sent at stop is given back to this). */
  delivery: DueDelivery;
  /** The attempt's number within the delivery's schedule. */
  scheduleAttempt: number;
  attempt: WebhookAttemptRow;
  /** The endpoint's sealed secret, or null for an invoice webhook_url. */
  sealedSecret: string | null;
  body: string;
}

interface Outcome {
  claimed: Claimed;
  result: AttemptResult;
  started: Date;
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
  /** Claimed attempts waiting for a slot of their target. */
  private readonly ready = new Map<string, Claimed[]>();
  /** Targets whose scan was cut at QUEUE_PER_TARGET: more of theirs may be due. */
  private cut = new Set<string>();
  private readonly abort = new AbortController();
  private pumping: Promise<void> | null = null;
  private again = false;
  private stale = true;
  private outboxDirty = true;
  private wakeScheduled = false;
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
    // Emits come in bursts (one timer each): they share one pass.
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.pump().catch((err: unknown) => this.logFailure(err));
    });
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
        if (this.stale) {
          this.stale = false;
          await this.scan();
        } else {
          for (const t of this.runDry()) await this.refill(t);
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
    await this.release();
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

  /** Targets with room whose queue ran dry but whose last read was cut: they may have more due. */
  private runDry(): string[] {
    return [...this.cut].filter((t) => (this.queued.get(t)?.length ?? 0) === 0 && (this.perTarget.get(t) ?? 0) < this.limits.perTarget);
  }

  /** Reads one target's next due deliveries (an index range, not a scan of everything due). */
  private async refill(target: string): Promise<void> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    const byEndpoint = !target.startsWith('url:');
    const rows: DueDelivery[] = await em.query(
      `SELECT ${DUE_COLUMNS} FROM webhook_deliveries
       WHERE ${byEndpoint ? `endpoint_id = ${p(1)}` : `endpoint_id IS NULL AND url = ${p(1)}`} AND next_attempt_at <= ${p(2)} AND status IN ('pending', 'failed')
       ORDER BY next_attempt_at LIMIT ${p(3)}`,
      [byEndpoint ? target : target.slice(4), iso(this.deps.clock.now()), QUEUE_PER_TARGET],
    );
    this.enqueue(target, rows);
  }

  private enqueue(target: string, rows: DueDelivery[]): void {
    if (rows.length === 0) {
      this.queued.delete(target);
      this.cut.delete(target);
      return;
    }
    this.queued.set(target, rows.map((r) => ({ ...r, attempts: Number(r.attempts), schedule_attempts: Number(r.schedule_attempts) })));
    if (rows.length >= QUEUE_PER_TARGET) this.cut.add(target);
    else this.cut.delete(target);
  }

  /** Reads what is due now into the queues: the earliest QUEUE_PER_TARGET of each target, oldest first. */
  private async scan(): Promise<void> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    const rows: DueDelivery[] = await em.query(
      `SELECT ${DUE_COLUMNS} FROM (
         SELECT d.*, ROW_NUMBER() OVER (PARTITION BY COALESCE(d.endpoint_id, d.url) ORDER BY d.next_attempt_at, d.id) AS rn
         FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= ${p(1)} AND (d.endpoint_id IS NULL OR e.enabled = ${p(2)})
       ) due WHERE rn <= ${p(3)} ORDER BY next_attempt_at, id LIMIT ${p(4)}`,
      [iso(this.deps.clock.now()), em.connection.options.type === 'postgres' ? true : 1, QUEUE_PER_TARGET, SCAN_LIMIT],
    );
    const byTarget = new Map<string, DueDelivery[]>();
    for (const r of rows) byTarget.set(targetOf(r), [...(byTarget.get(targetOf(r)) ?? []), r]);
    this.queued = new Map();
    this.cut = new Set();
    for (const [t, list] of byTarget) this.enqueue(t, list);
  }

  /** Fills free slots from the queues, each target up to its bound, and claims them in one transaction. */
  /**
   * Claims from the queues, in one transaction, what the slots can take now plus one more round
   * per target (so most attempts start without waiting for a transaction), then starts what fits.
   * A target is topped up only once half a round has gone, so claims come in batches.
   */
  private async startQueued(): Promise<void> {
    if (this.abort.signal.aborted) return;
    const round = this.limits.perTarget;
    let room = 2 * this.limits.maxInFlight - this.inFlight.size - this.readyCount();
    const chosen: DueDelivery[] = [];
    for (const [t, list] of this.queued) {
      if (room <= 0) break;
      const want = Math.min(room, 2 * round - (this.perTarget.get(t) ?? 0) - (this.ready.get(t)?.length ?? 0));
      if (want < Math.max(1, round / 2) && (this.ready.get(t)?.length ?? 0) > 0) continue;
      if (want <= 0) continue;
      const taken = list.splice(0, want);
      chosen.push(...taken);
      room -= taken.length;
      if (list.length === 0) this.queued.delete(t);
    }
    if (chosen.length > 0) {
      const claimed = await this.claim(chosen, this.deps.clock.now());
      if (claimed.length < chosen.length) this.stale = true;
      for (const c of claimed) {
        const t = targetOf(c.delivery);
        this.ready.set(t, [...(this.ready.get(t) ?? []), c]);
      }
    }
    this.launchReady();
  }

  private readyCount(): number {
    let n = 0;
    for (const list of this.ready.values()) n += list.length;
    return n;
  }

  /** Starts claimed attempts while their target and the total have free slots. */
  private launchReady(): void {
    for (const [t, list] of this.ready) {
      while (list.length > 0 && (this.perTarget.get(t) ?? 0) < this.limits.perTarget && this.inFlight.size < this.limits.maxInFlight) {
        if (this.abort.signal.aborted) return;
        this.launch(list.shift()!);
      }
      if (list.length === 0) this.ready.delete(t);
    }
  }

  /** At stop: claims not yet sent are given back, as if never claimed. */
  private async release(): Promise<void> {
    const claims = [...this.ready.values()].flat();
    this.ready.clear();
    if (claims.length === 0) return;
    await this.deps.store.write(async (em) => {
      const p = (i: number) => placeholder(em, i);
      for (const { delivery: d, attempt } of claims) {
        await em.query(`DELETE FROM webhook_attempts WHERE id = ${p(1)}`, [attempt.id]);
        await em.query(
          `UPDATE webhook_deliveries SET status = ${p(1)}, attempts = ${p(2)}, schedule_attempts = ${p(3)}, next_attempt_at = ${p(4)} WHERE id = ${p(5)} AND attempts = ${p(6)}`,
          [d.status, d.attempts, d.schedule_attempts, d.next_attempt_at, d.id, attempt.number],
        );
      }
    });
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
      const endpointIds = [...new Set(due.map((d) => d.endpoint_id).filter((id): id is string => id !== null))];
      const endpoints = new Map<string, { url: string; secret_sealed: string; enabled: boolean | number }>();
      if (endpointIds.length > 0) {
        const rows: Array<{ id: string; url: string; secret_sealed: string; enabled: boolean | number }> = await em.query(
          `SELECT id, url, secret_sealed, enabled FROM webhook_endpoints WHERE id IN (${list(em, endpointIds.length)})`,
          endpointIds,
        );
        for (const r of rows) endpoints.set(r.id, r);
      }
      const sendable = due.filter((d) => d.endpoint_id === null || Boolean(endpoints.get(d.endpoint_id)?.enabled));
      if (sendable.length === 0) return [];

      // One guarded update for the batch: only rows still open and due come back. The next
      // attempt is planned as if this one fails, by the schedule position each row is at.
      // (Placeholders appear in the order of their values: SQLite binds `?` by position.)
      const plans = Array.from({ length: MAX_ATTEMPTS }, (_, i) => afterAttempt(i + 1, false, now).next_attempt_at);
      const p = (i: number) => placeholder(em, i);
      const cases = plans.map((_, i) => `WHEN ${i} THEN ${p(i + 1)}`).join(' ');
      const base = plans.length;
      const rows = await returning<{ id: string; attempts: number | string; schedule_attempts: number | string }>(
        em,
        `UPDATE webhook_deliveries SET status = 'pending', attempts = attempts + 1, schedule_attempts = schedule_attempts + 1,
           next_attempt_at = CASE schedule_attempts ${cases} ELSE NULL END, updated_at = ${p(base + 1)}
         WHERE next_attempt_at <= ${p(base + 2)} AND status IN ('pending', 'failed') AND id IN (${list(em, sendable.length, base + 3)})
         RETURNING id, attempts, schedule_attempts`,
        [...plans, at, at, ...sendable.map((d) => d.id)],
      );
      if (rows.length === 0) return [];
      const after = new Map(rows.map((r) => [r.id, { attempts: Number(r.attempts), scheduleAttempt: Number(r.schedule_attempts) }]));
      const eventIds = [...new Set(sendable.filter((d) => after.has(d.id)).map((d) => d.event_id))];
      const events: Array<{ id: string; body: string }> = await em.query(`SELECT id, body FROM events WHERE id IN (${list(em, eventIds.length)})`, eventIds);
      const bodies = new Map(events.map((e) => [e.id, e.body]));

      const claimed: Claimed[] = [];
      for (const d of sendable) {
        const counted = after.get(d.id);
        if (!counted) continue;
        const endpoint = d.endpoint_id === null ? null : endpoints.get(d.endpoint_id)!;
        const url = endpoint?.url ?? d.url;
        const attempt: WebhookAttemptRow = {
          id: newId(),
          delivery_id: d.id,
          number: counted.attempts,
          url,
          started_at: at,
          finished_at: null,
          response_status: null,
          error: null,
          duration_ms: null,
        };
        claimed.push({ delivery: { ...d, url }, scheduleAttempt: counted.scheduleAttempt, attempt, sealedSecret: endpoint?.secret_sealed ?? null, body: bodies.get(d.event_id)! });
      }
      await insertRows(em, 'webhook_attempts', claimed.map((c) => c.attempt));
      return claimed;
    });
  }


  private launch(c: Claimed): void {
    const d = c.delivery;
    const target = targetOf(d);
    this.perTarget.set(target, (this.perTarget.get(target) ?? 0) + 1);
    const started = this.deps.clock.now();
    const run = this.send(c, started)
      .then((result) => {
        this.outcomes.push({ claimed: c, result, started, ended: this.deps.clock.now() });
        // Written by the next claim, or by a flush when nothing is claimed within a few ms.
        setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
      })
      .catch((err: unknown) => this.deps.logger.error('webhook attempt failed', { delivery_id: d.id, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        // The slot frees as soon as the answer is in: the claim keeps the delivery from being due
        // again, so the next attempt need not wait for this outcome's write.
        this.inFlight.delete(d.id);
        const left = (this.perTarget.get(target) ?? 1) - 1;
        if (left > 0) this.perTarget.set(target, left);
        else this.perTarget.delete(target);
        if (this.abort.signal.aborted) return;
        this.launchReady();
        void this.pump().catch((err: unknown) => this.logFailure(err));
      });
    this.inFlight.set(d.id, run);
  }

  private async send(c: Claimed, now: Date): Promise<AttemptResult> {
    const d = c.delivery;
    const secret =
      d.endpoint_id !== null && c.sealedSecret !== null
        ? this.deps.secrets.openEndpoint(d.endpoint_id, c.sealedSecret)
        : await this.deps.callbackSecrets.secretFor(d.account_id);
    return this.deps.sender.post(d.url, { id: d.event_id, type: d.event_type, body: c.body }, secret, now, this.abort.signal);
  }

  private async recordQueued(em: EntityManager): Promise<void> {
    const batch = this.outcomes;
    this.outcomes = [];
    await record(em, batch);
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

/** Each attempt's result, and where its delivery goes next: two statements for the whole batch. */
async function record(em: EntityManager, outcomes: Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await updateFromValues(
    em,
    `UPDATE webhook_attempts SET started_at = v.column2, finished_at = v.column3, response_status = CAST(v.column4 AS integer), error = v.column5,
       duration_ms = CAST(v.column6 AS integer)`,
    'webhook_attempts.id = v.column1',
    outcomes.map(({ claimed: { attempt }, result, started, ended }) => [attempt.id, iso(started), iso(ended), result.responseStatus, result.error, result.durationMs]),
  );
  await updateFromValues(
    em,
    `UPDATE webhook_deliveries SET status = v.column2, next_attempt_at = v.column3, last_response_status = CAST(v.column4 AS integer), last_error = v.column5,
       updated_at = v.column6, url = v.column7`,
    // A delivery changed meanwhile (its endpoint deleted) keeps that change.
    "webhook_deliveries.id = v.column1 AND webhook_deliveries.status = 'pending' AND webhook_deliveries.attempts = CAST(v.column8 AS integer)",
    outcomes.map(({ claimed: { delivery, attempt, scheduleAttempt }, result, ended }) => {
      const next = afterAttempt(scheduleAttempt, result.ok, ended);
      return [delivery.id, next.status, next.next_attempt_at, result.responseStatus, result.error, iso(ended), delivery.url, attempt.number];
    }),
  );
}
