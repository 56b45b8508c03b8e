import type { EntityManager } from 'typeorm';
import type { EventRow } from '../db/entities/events';
import type { DeliveryStatus, WebhookAttemptRow, WebhookDeliveryRow } from '../db/entities/webhooks';
import { insertRows, list, shaped, updateFromValues } from '../db/batch-statements';
import { placeholder, rawQuery, returning } from '../db/raw';
import type { Store } from '../db/store';
import { iso } from '../shared/clock';
import { newTimeOrderedId } from '../shared/ids';
import type { CallbackSecrets } from './callback-secret';
import { fanOut } from './fan-out';
import { afterAttempt, MAX_ATTEMPTS, RETRY_DELAYS_MS } from './retry-schedule';
import { INTERRUPTED, type AttemptResult } from './transport';

const FAN_OUT_BATCH = 500;
/** Due deliveries read per target at a time; a target cut there is read again once its queue runs dry. */
export const QUEUE_PER_TARGET = 128;
/** Event bodies the fan-out read, kept for the claims that follow it (most claims then read none). */
const BODIES_KEPT = 4096;
/** Rows a scan of everything due reads at most. */
const SCAN_LIMIT = 2000;
const DUE_FIELDS = ['id', 'account_id', 'event_id', 'event_type', 'endpoint_id', 'url', 'status', 'attempts', 'schedule_attempts', 'next_attempt_at'] as const;
const DUE_COLUMNS = DUE_FIELDS.join(', ');

/** A due delivery as a scan reads it (DUE_FIELDS of the row; a due one has its next attempt set). */
export type DueDelivery = Omit<Pick<WebhookDeliveryRow, (typeof DUE_FIELDS)[number]>, 'next_attempt_at'> & { next_attempt_at: string };

/** A claimed attempt with what sending it needs, read in the claiming transaction. */
export interface Claimed {
  /** As it was before the claim (a claim not sent at stop is given back to this), with the URL to use. */
  delivery: DueDelivery;
  /** The attempt's number within the delivery's schedule. */
  scheduleAttempt: number;
  /** When it was claimed (ms, the dispatcher's clock): a claim is sent only while fresh. */
  claimedAt: number;
  /** The attempt's row as it will be written with its outcome (nothing of it is in the store before). */
  attempt: WebhookAttemptRow;
  /** The endpoint's sealed secret, or null for an invoice webhook_url. */
  sealedSecret: string | null;
  body: string;
}

export interface Outcome {
  claimed: Claimed;
  result: AttemptResult;
  started: Date;
  ended: Date;
}

/** Where a delivery goes: its endpoint, or one invoice webhook_url. */
export const targetOf = (d: { endpoint_id: string | null; url: string }): string => d.endpoint_id ?? `url:${d.url}`;

const asDue = (r: DueDelivery): DueDelivery => ({ ...r, attempts: Number(r.attempts), schedule_attempts: Number(r.schedule_attempts) });

/**
 * The dispatcher's statements, in SQL both dialects run and batched where the hot path needs it:
 * fan-out of the outbox, reading what is due, claiming attempts, writing outcomes, giving claims
 * back, and recovering attempts a crash left unfinished.
 */
export class AttemptStore {
  /** Recent events' bodies by id, oldest first: a claim reads from the store only those not here. */
  private readonly bodies = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly callbackSecrets: CallbackSecrets,
  ) {}

  /** Fans out every undispatched outbox row; `made` hears of each batch's new deliveries (all due now). */
  async fanOutNew(now: Date, made: (deliveries: DueDelivery[]) => void): Promise<void> {
    for (;;) {
      const events = await rawQuery<EventRow>(
        this.store.read,
        `SELECT id, seq, account_id, type, object_id, callback_url, body, created_at, dispatched_at FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT ${FAN_OUT_BATCH}`,
      );
      if (events.length === 0) return;
      for (const e of events) this.keepBody(e.id, e.body);
      const deliveries = await this.store.write((em) => fanOut(em, events, iso(now), this.callbackSecrets));
      if (deliveries.length > 0) made(deliveries as DueDelivery[]);
      if (events.length < FAN_OUT_BATCH) return;
    }
  }

  /**
   * What is due now, oldest first: at most QUEUE_PER_TARGET of each target, so no target hides the
   * others. With `since`: only attempts already made once whose planned time fell in (since, now].
   */
  async scanDue(now: Date, since?: Date): Promise<DueDelivery[]> {
    const em = this.store.read;
    const p = (i: number) => placeholder(em, i);
    // (Placeholders in the order of their values: SQLite binds `?` by position.)
    const fallen = since ? `AND d.next_attempt_at > ${p(3)} AND d.attempts > 0` : '';
    const n = since ? 4 : 3;
    const rows = await rawQuery<DueDelivery>(
      em,
      `SELECT ${DUE_COLUMNS} FROM (
         SELECT d.*, ROW_NUMBER() OVER (PARTITION BY COALESCE(d.endpoint_id, d.url) ORDER BY d.next_attempt_at, d.id) AS rn
         FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.status IN ('pending', 'failed') AND d.next_attempt_at <= ${p(1)} AND (d.endpoint_id IS NULL OR e.enabled = ${p(2)}) ${fallen}
       ) due WHERE rn <= ${p(n)} ORDER BY next_attempt_at, id LIMIT ${p(n + 1)}`,
      since ? [iso(now), true, iso(since), QUEUE_PER_TARGET, SCAN_LIMIT] : [iso(now), true, QUEUE_PER_TARGET, SCAN_LIMIT],
    );
    return rows.map(asDue);
  }

  /** One target's next due deliveries (an index range, not a scan of everything due). */
  async dueOf(target: string, now: Date): Promise<DueDelivery[]> {
    const em = this.store.read;
    const p = (i: number) => placeholder(em, i);
    const byEndpoint = !target.startsWith('url:');
    const rows = await rawQuery<DueDelivery>(
      em,
      `SELECT ${DUE_COLUMNS} FROM webhook_deliveries
       WHERE ${byEndpoint ? `endpoint_id = ${p(1)}` : `endpoint_id IS NULL AND url = ${p(1)}`} AND next_attempt_at <= ${p(2)} AND status IN ('pending', 'failed')
       ORDER BY next_attempt_at LIMIT ${p(3)}`,
      [byEndpoint ? target : target.slice(4), iso(now), QUEUE_PER_TARGET],
    );
    return rows.map(asDue);
  }

  /**
   * Counts and plans each attempt before anything is sent, in one transaction that also writes
   * `outcomes` (attempts that finished meanwhile); reads each endpoint's current URL and secret
   * and each event's body. Rows no longer due, or of an endpoint now disabled, are left out.
   */
  claim(due: DueDelivery[], now: Date, outcomes: () => Outcome[]): Promise<Claimed[]> {
    const at = iso(now);
    return this.store.write(async (em) => {
      await record(em, outcomes());
      const endpointIds = [...new Set(due.map((d) => d.endpoint_id).filter((id): id is string => id !== null))];
      const endpoints = new Map<string, { url: string; secret_sealed: string; enabled: boolean | number }>();
      if (endpointIds.length > 0) {
        const rows = await rawQuery<{ id: string; url: string; secret_sealed: string; enabled: boolean | number }>(
          em,
          shaped(
            em,
            'claim:endpoints',
            endpointIds.length,
            () => `SELECT id, url, secret_sealed, enabled FROM webhook_endpoints WHERE id IN (${list(em, endpointIds.length)})`,
          ),
          endpointIds,
        );
        for (const r of rows) endpoints.set(r.id, r);
      }
      const sendable = due.filter((d) => d.endpoint_id === null || Boolean(endpoints.get(d.endpoint_id)?.enabled));
      if (sendable.length === 0) return [];

      // One guarded update for the batch: only rows still open and due come back. The next
      // attempt is planned as if this one fails, by the schedule position each row is at (the
      // last one gets a guard time instead: its delivery stays findable as claimed until its
      // outcome is written, and comes back only if that outcome is lost).
      // (Placeholders appear in the order of their values: SQLite binds `?` by position.)
      const plans = Array.from({ length: MAX_ATTEMPTS }, (_, i) => afterAttempt(i + 1, false, now).next_attempt_at ?? lastAttemptGuard(now));
      const rows = await returning<{ id: string; attempts: number | string; schedule_attempts: number | string }>(
        em,
        shaped(em, 'claim:deliveries', sendable.length, () => {
          const p = (i: number) => placeholder(em, i);
          const cases = plans.map((_, i) => `WHEN ${i} THEN ${p(i + 1)}`).join(' ');
          const base = plans.length;
          return `UPDATE webhook_deliveries SET status = 'pending', attempts = attempts + 1, schedule_attempts = schedule_attempts + 1,
             next_attempt_at = CASE schedule_attempts ${cases} ELSE NULL END, updated_at = ${p(base + 1)}
           WHERE next_attempt_at <= ${p(base + 2)} AND status IN ('pending', 'failed') AND id IN (${list(em, sendable.length, base + 3)})
           RETURNING id, attempts, schedule_attempts`;
        }),
        [...plans, at, at, ...sendable.map((d) => d.id)],
      );
      if (rows.length === 0) return [];
      const counted = new Map(rows.map((r) => [r.id, { attempts: Number(r.attempts), scheduleAttempt: Number(r.schedule_attempts) }]));
      const bodies = new Map<string, string>();
      const unread = new Set<string>();
      for (const d of sendable) {
        if (!counted.has(d.id) || bodies.has(d.event_id)) continue;
        const kept = this.bodies.get(d.event_id);
        if (kept === undefined) unread.add(d.event_id);
        else bodies.set(d.event_id, kept);
      }
      if (unread.size > 0) {
        const events = await rawQuery<{ id: string; body: string }>(
          em,
          shaped(em, 'claim:bodies', unread.size, () => `SELECT id, body FROM events WHERE id IN (${list(em, unread.size)})`),
          [...unread],
        );
        for (const e of events) bodies.set(e.id, e.body);
      }

      const claimed: Claimed[] = [];
      for (const d of sendable) {
        const c = counted.get(d.id);
        if (!c) continue;
        const endpoint = d.endpoint_id === null ? null : endpoints.get(d.endpoint_id)!;
        const url = endpoint?.url ?? d.url;
        const attempt: WebhookAttemptRow = {
          id: newTimeOrderedId(now.getTime()),
          delivery_id: d.id,
          number: c.attempts,
          url,
          started_at: at,
          finished_at: null,
          response_status: null,
          error: null,
          duration_ms: null,
        };
        claimed.push({
          delivery: { ...d, url },
          scheduleAttempt: c.scheduleAttempt,
          claimedAt: now.getTime(),
          attempt,
          sealedSecret: endpoint?.secret_sealed ?? null,
          body: bodies.get(d.event_id)!,
        });
      }
      return claimed;
    });
  }

  /** Writes outcomes in one transaction. */
  record(outcomes: Outcome[]): Promise<void> {
    return this.store.write((em) => record(em, outcomes));
  }

  /** Gives claims that were never sent back, as if never claimed. */
  async release(claims: Claimed[]): Promise<void> {
    if (claims.length === 0) return;
    await this.store.write(async (em) => {
      const p = (i: number) => placeholder(em, i);
      for (const { delivery: d, attempt } of claims) {
        // A delivery stopped meanwhile (its endpoint deleted) stays stopped; only the count goes back.
        await rawQuery(
          em,
          `UPDATE webhook_deliveries SET status = ${p(1)}, next_attempt_at = ${p(2)} WHERE id = ${p(3)} AND attempts = ${p(4)} AND status = 'pending'`,
          [d.status, d.next_attempt_at, d.id, attempt.number],
        );
        await rawQuery(em, `UPDATE webhook_deliveries SET attempts = ${p(1)}, schedule_attempts = ${p(2)} WHERE id = ${p(3)} AND attempts = ${p(4)}`, [
          d.attempts,
          d.schedule_attempts,
          d.id,
          attempt.number,
        ]);
      }
    });
  }

  /**
   * At start: attempts a previous run claimed but left without an outcome (their delivery still
   * `pending` with no attempt row of that number) are recorded as interrupted, and their
   * deliveries move on as after a failure (the claim already planned the next attempt). A claim
   * always plans a time, so the open-deliveries index finds them.
   */
  recoverInterrupted(now: Date): Promise<number> {
    const at = iso(now);
    return this.store.write(async (em) => {
      const open = await rawQuery<{
        id: string;
        url: string;
        attempts: number | string;
        schedule_attempts: number | string;
        next_attempt_at: string;
        updated_at: string;
      }>(
        em,
        `SELECT d.id, d.url, d.attempts, d.schedule_attempts, d.next_attempt_at, d.updated_at FROM webhook_deliveries d
         WHERE d.next_attempt_at IS NOT NULL AND d.status = 'pending' AND d.attempts > 0
           AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.number = d.attempts)`,
      );
      const p = (i: number) => placeholder(em, i);
      for (const d of open) {
        const attempt: WebhookAttemptRow = {
          id: newTimeOrderedId(now.getTime()),
          delivery_id: d.id,
          number: Number(d.attempts),
          url: d.url,
          started_at: d.updated_at,
          finished_at: at,
          response_status: null,
          error: INTERRUPTED,
          duration_ms: null,
        };
        await insertRows(em, 'webhook_attempts', [attempt]);
        const next: { status: DeliveryStatus; next_attempt_at: string | null } =
          Number(d.schedule_attempts) >= MAX_ATTEMPTS
            ? { status: 'exhausted', next_attempt_at: null }
            : { status: 'failed', next_attempt_at: d.next_attempt_at };
        await rawQuery(
          em,
          `UPDATE webhook_deliveries SET status = ${p(1)}, next_attempt_at = ${p(2)}, last_response_status = NULL, last_error = ${p(3)}, updated_at = ${p(4)} WHERE id = ${p(5)}`,
          [next.status, next.next_attempt_at, INTERRUPTED, at, d.id],
        );
      }
      return open.length;
    });
  }

  /** Keeps an event's body for the claims that follow; the oldest goes when the map is full. */
  private keepBody(eventId: string, body: string): void {
    this.bodies.set(eventId, body);
    if (this.bodies.size > BODIES_KEPT) this.bodies.delete(this.bodies.keys().next().value!);
  }
}

/** The time a last attempt's claim plans: its outcome decides, this only brings back a delivery whose outcome was lost. */
const lastAttemptGuard = (now: Date): string => new Date(now.getTime() + RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]!).toISOString();

/** Each attempt, written once with its result, and where its delivery goes next: two statements for the whole batch. */
async function record(em: EntityManager, outcomes: Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await insertRows(
    em,
    'webhook_attempts',
    outcomes.map(({ claimed: { attempt }, result, started, ended }) => ({
      ...attempt,
      started_at: iso(started),
      finished_at: iso(ended),
      response_status: result.responseStatus,
      error: result.error,
      duration_ms: result.durationMs,
    })),
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
