import { setMaxListeners } from 'node:events';
import { EventEntity } from '../db/entities/events';
import { WebhookAttemptEntity, WebhookDeliveryEntity, WebhookEndpointEntity, type DeliveryStatus, type WebhookAttemptRow } from '../db/entities/webhooks';
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

const OPEN: DeliveryStatus[] = ['pending', 'failed'];
const FAN_OUT_BATCH = 500;
export const INTERRUPTED = 'interrupted: the daemon stopped during the attempt';

/** A due delivery with what its attempt needs. */
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
  body: string;
  endpoint_url: string | null;
  endpoint_secret: string | null;
}

const targetOf = (d: { endpoint_id: string | null; url: string }): string => d.endpoint_id ?? `url:${d.url}`;

/**
 * Sends deliveries from the store. Each attempt is claimed in the store before it is sent: the
 * claim counts it and already plans the next one as if it failed, so an attempt is never sent
 * twice, and a daemon that dies mid-attempt resumes at the planned time (at least once). Woken by
 * the outbox and by each finished attempt, and polled every second for retries that fall due.
 * Slots are bounded overall and per target, and a full target is left out of the scan, so one
 * slow endpoint never holds back the others.
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perTarget = new Map<string, number>();
  private readonly abort = new AbortController();
  private pumping: Promise<void> | null = null;
  private again = false;

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

  /** Fire and forget: a pump soon (the outbox and finished attempts call it). */
  wake(): void {
    this.pump().catch((err: unknown) => this.deps.logger.error('webhook dispatch failed', { error: err instanceof Error ? err.message : String(err) }));
  }

  /** Fans out new events and starts what is due; one pump at a time, a call during one runs it again. */
  pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      do {
        this.again = false;
        if (this.abort.signal.aborted) return;
        await this.fanOutNew();
        await this.startDue();
      } while (this.again);
    })().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  /** Resolves once no pump runs and no attempt is in flight (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.pumping || this.inFlight.size > 0) {
      await Promise.allSettled([this.pumping, ...this.inFlight.values()]);
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
    this.deps.sender.close();
  }

  private async fanOutNew(): Promise<void> {
    for (;;) {
      const events = await this.deps.store.read
        .createQueryBuilder(EventEntity, 'e')
        .where('e.dispatched_at IS NULL')
        .orderBy('e.seq', 'ASC')
        .limit(FAN_OUT_BATCH)
        .getMany();
      if (events.length === 0) return;
      await this.deps.store.write((em) => fanOut(em, events, iso(this.deps.clock.now()), this.deps.callbackSecrets));
      if (events.length < FAN_OUT_BATCH) return;
    }
  }

  private async startDue(): Promise<void> {
    const free = this.limits.maxInFlight - this.inFlight.size;
    if (free <= 0 || this.abort.signal.aborted) return;
    const now = this.deps.clock.now();
    const due = await this.findDue(iso(now), free);
    const chosen: DueDelivery[] = [];
    const taken = new Map<string, number>();
    for (const d of due) {
      if (chosen.length >= free) break;
      const t = targetOf(d);
      const busy = (this.perTarget.get(t) ?? 0) + (taken.get(t) ?? 0);
      if (busy >= this.limits.perTarget) continue;
      taken.set(t, (taken.get(t) ?? 0) + 1);
      chosen.push(d);
    }
    if (chosen.length === 0) return;
    const claimed = await this.claim(chosen, now);
    for (const { delivery, attempt } of claimed) this.launch(delivery, attempt);
  }

  private async findDue(now: string, free: number): Promise<DueDelivery[]> {
    const qb = this.deps.store.read
      .createQueryBuilder(WebhookDeliveryEntity, 'd')
      .innerJoin(EventEntity.options.name, 'ev', 'ev.id = d.event_id')
      .leftJoin(WebhookEndpointEntity.options.name, 'e', 'e.id = d.endpoint_id')
      .select(['d.id AS id', 'd.account_id AS account_id', 'd.event_id AS event_id', 'd.event_type AS event_type', 'd.endpoint_id AS endpoint_id'])
      .addSelect(['d.url AS url', 'd.status AS status', 'd.attempts AS attempts', 'd.schedule_attempts AS schedule_attempts', 'd.next_attempt_at AS next_attempt_at'])
      .addSelect(['ev.body AS body', 'e.url AS endpoint_url', 'e.secret_sealed AS endpoint_secret'])
      .where('d.status IN (:...open)', { open: OPEN })
      .andWhere('d.next_attempt_at <= :now', { now })
      .andWhere('(d.endpoint_id IS NULL OR e.enabled = :enabled)', { enabled: true });
    if (this.inFlight.size > 0) qb.andWhere('d.id NOT IN (:...flying)', { flying: [...this.inFlight.keys()] });
    const full = [...this.perTarget].filter(([, n]) => n >= this.limits.perTarget).map(([t]) => t);
    const fullEndpoints = full.filter((t) => !t.startsWith('url:'));
    const fullUrls = full.filter((t) => t.startsWith('url:')).map((t) => t.slice(4));
    if (fullEndpoints.length > 0) qb.andWhere('(d.endpoint_id IS NULL OR d.endpoint_id NOT IN (:...fullEndpoints))', { fullEndpoints });
    if (fullUrls.length > 0) qb.andWhere('(d.endpoint_id IS NOT NULL OR d.url NOT IN (:...fullUrls))', { fullUrls });
    const rows: DueDelivery[] = await qb.orderBy('d.next_attempt_at', 'ASC').limit(free * 4).getRawMany();
    return rows.map((r) => ({ ...r, attempts: Number(r.attempts), schedule_attempts: Number(r.schedule_attempts) }));
  }

  /** Counts and plans each attempt in the store before anything is sent; rows changed meanwhile are skipped. */
  private claim(due: DueDelivery[], now: Date): Promise<Array<{ delivery: DueDelivery; attempt: WebhookAttemptRow }>> {
    const at = iso(now);
    return this.deps.store.write(async (em) => {
      const claimed: Array<{ delivery: DueDelivery; attempt: WebhookAttemptRow }> = [];
      for (const d of due) {
        const url = d.endpoint_url ?? d.url;
        const number = d.schedule_attempts + 1;
        const res = await em
          .createQueryBuilder()
          .update(WebhookDeliveryEntity)
          .set({
            status: 'pending',
            attempts: d.attempts + 1,
            schedule_attempts: number,
            next_attempt_at: afterAttempt(number, false, now).next_attempt_at,
            url,
            updated_at: at,
          })
          .where('id = :id AND status = :status AND next_attempt_at = :next AND attempts = :attempts', { id: d.id, status: d.status, next: d.next_attempt_at, attempts: d.attempts })
          .execute();
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
        await em.insert(WebhookAttemptEntity, attempt);
        claimed.push({ delivery: { ...d, url, schedule_attempts: number }, attempt });
      }
      return claimed;
    });
  }

  private launch(d: DueDelivery, attempt: WebhookAttemptRow): void {
    const target = targetOf(d);
    this.perTarget.set(target, (this.perTarget.get(target) ?? 0) + 1);
    const run = this.attempt(d, attempt)
      .catch((err: unknown) => this.deps.logger.error('webhook attempt failed', { delivery_id: d.id, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.inFlight.delete(d.id);
        const left = (this.perTarget.get(target) ?? 1) - 1;
        if (left > 0) this.perTarget.set(target, left);
        else this.perTarget.delete(target);
        if (!this.abort.signal.aborted) this.wake();
      });
    this.inFlight.set(d.id, run);
  }

  private async attempt(d: DueDelivery, attempt: WebhookAttemptRow): Promise<void> {
    const secret =
      d.endpoint_id !== null && d.endpoint_secret !== null
        ? this.deps.secrets.openEndpoint(d.endpoint_id, d.endpoint_secret)
        : await this.deps.callbackSecrets.secretFor(d.account_id);
    const result = await this.deps.sender.post(d.url, { id: d.event_id, type: d.event_type, body: d.body }, secret, this.deps.clock.now(), this.abort.signal);
    await this.record(d, attempt, result);
  }

  /** The attempt's outcome and where the delivery goes next, in one transaction. */
  private record(d: DueDelivery, attempt: WebhookAttemptRow, result: AttemptResult): Promise<void> {
    const ended = this.deps.clock.now();
    const at = iso(ended);
    const next = afterAttempt(d.schedule_attempts, result.ok, ended);
    return this.deps.store.write(async (em) => {
      await em.update(
        WebhookAttemptEntity,
        { id: attempt.id },
        { finished_at: at, response_status: result.responseStatus, error: result.error, duration_ms: result.durationMs },
      );
      await em
        .createQueryBuilder()
        .update(WebhookDeliveryEntity)
        .set({ ...next, last_response_status: result.responseStatus, last_error: result.error, updated_at: at })
        .where('id = :id AND status = :pending AND attempts = :n', { id: d.id, pending: 'pending', n: attempt.number })
        .execute();
    });
  }
}
