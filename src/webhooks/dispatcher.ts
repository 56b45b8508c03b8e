import { setMaxListeners } from 'node:events';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { QUEUE_PER_TARGET, targetOf, type AttemptStore, type Claimed, type DueDelivery, type Outcome } from './attempt.store';
import type { CallbackSecrets } from './callback-secret';
import type { WebhookSecrets } from './secrets';
import { RETRY_DELAYS_MS } from './schedule';
import type { AttemptResult, AttemptSender } from './sender';

export interface DispatcherLimits {
  /** Attempts in flight across all targets. */
  maxInFlight: number;
  /** Attempts in flight to one target (an endpoint, or one invoice webhook_url). */
  perTarget: number;
}

export const DEFAULT_LIMITS: DispatcherLimits = { maxInFlight: 64, perTarget: 8 };

/**
 * How long a finished attempt's outcome waits for a claim's transaction to carry it. A crash in
 * that window only costs the log the answer: the attempt is then recorded as interrupted and the
 * delivery sent again on its schedule (at least once).
 */
const FLUSH_AFTER_MS = 20;

/**
 * Rounds of slots claimed ahead for a target that answers quickly (and overall): each transaction
 * carries many claims (and the outcomes that came in meanwhile) instead of a few, which is most
 * of a delivery's cost. Any other target gets SLOW_AHEAD_ROUNDS.
 */
const AHEAD_ROUNDS = 16;

/**
 * New deliveries from the fan-out queued in memory per target, and in all: a burst then goes out
 * without being read back from the store (a read holds QUEUE_PER_TARGET); past these, the store
 * keeps them and the refill reads them.
 */
const NEW_QUEUED_PER_TARGET = 4096;
const NEW_QUEUED_MAX = 20_000;

/** The periodic pass reads only what fell due since the last read; everything due, this often. */
const FULL_SCAN_EVERY_MS = 60_000;
const SLOW_AHEAD_ROUNDS = 2;

/**
 * A claim is sent only while it is this fresh: its delivery falls due again (as if the attempt
 * failed) one retry delay after the claim, so a claim that waited longer than half the shortest
 * delay is given back and claimed anew rather than risk a second send of the same attempt.
 */
export const CLAIM_FRESH_MS = RETRY_DELAYS_MS[0] / 2;

/** An answer this fast makes a target quick: its deepest claim then waits well within CLAIM_FRESH_MS. */
const QUICK_ANSWER_MS = CLAIM_FRESH_MS / (2 * AHEAD_ROUNDS);

/**
 * Sends deliveries from the store. Each attempt is claimed in the store before it is sent: the
 * claim counts it and already plans the next one as if it failed, so an attempt is never sent
 * twice, and a daemon that dies mid-attempt resumes at the planned time (at least once).
 *
 * What is due is read into queues per target; slots are bounded overall and per target and
 * filled from those queues, so one slow endpoint never holds back the others. The store is read
 * again when something may have fallen due: an outbox emit, a retry, the one-second tick, or a
 * target whose queue ran dry. Claims run several rounds ahead of the slots and come in large
 * batches, and outcomes ride in the next claim's transaction.
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perTarget = new Map<string, number>();
  /** Targets with work whose last answer came within QUICK_ANSWER_MS. */
  private readonly quick = new Set<string>();
  private queued = new Map<string, DueDelivery[]>();
  /** Targets whose read was cut at QUEUE_PER_TARGET: more of theirs may be due. */
  private cut = new Set<string>();
  /** Claimed attempts waiting for a slot of their target. */
  private readonly ready = new Map<string, Claimed[]>();
  private pumping: Promise<void> | null = null;
  private again = false;
  private stale = true;
  /** The periodic pass asked for what fell due since `lastScanAt`. */
  private fallingDue = false;
  private lastScanAt: Date | null = null;
  private lastFullScanAt: number | null = null;
  private outboxDirty = true;
  private wakeScheduled = false;
  private outcomes: Outcome[] = [];
  /** Attempts handed over that the sender gave back unstarted (a stop or a change): given back to the store. */
  private returned: Claimed[] = [];
  /** What may be handed over: the bounds times the sender's window (a sender thread keeps the bounds itself). */
  private readonly handOver: DispatcherLimits;
  private flushing: Promise<void> | null = null;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      attempts: AttemptStore;
      clock: Clock;
      logger: Logger;
      sender: AttemptSender;
      secrets: WebhookSecrets;
      callbackSecrets: CallbackSecrets;
      /** The daemon's shutdown signal: no new attempts once aborted; those in flight are cut short. */
      signal: AbortSignal;
    },
    private readonly limits: DispatcherLimits = DEFAULT_LIMITS,
  ) {
    // Every attempt in flight listens to the one stop signal.
    setMaxListeners(0, deps.signal);
    const window = deps.sender.window ?? 1;
    this.handOver = { maxInFlight: limits.maxInFlight * window, perTarget: limits.perTarget * window };
  }

  /** The outbox has new rows: fans them out soon (and reads what is due only if that made deliveries). Fire and forget. */
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

  /** A delivery was queued again (retry, replay, a claim given back): reads everything due soon. Fire and forget. */
  rescan(): void {
    this.stale = true;
    this.outboxDirty = true;
    this.pump().catch((err: unknown) => this.logFailure(err));
  }

  /**
   * The periodic pass: fans out new outbox rows, reads the attempts that fell due since the last
   * read (everything due, at start and every FULL_SCAN_EVERY_MS) and starts them; resolves when
   * that pass is done.
   */
  tick(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    if (this.lastFullScanAt === null || now - this.lastFullScanAt >= FULL_SCAN_EVERY_MS || now < this.lastFullScanAt) this.stale = true;
    this.fallingDue = true;
    this.outboxDirty = true;
    return this.pump();
  }

  /** Resolves once no pass runs, no attempt is in flight and every outcome is written (tests and benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = this.pumping !== null || this.inFlight.size > 0;
      // Outcomes are written once the work stops, not at every wake: a waiter changes no batching.
      if (!busy && this.outcomes.length > 0) void this.flush();
      if (!busy && !this.flushing) return;
      await Promise.allSettled([this.pumping, this.flushing, ...this.inFlight.values()]);
    }
  }

  /** At start, before the first pass: see AttemptStore.recoverInterrupted. */
  recoverInterrupted(): Promise<number> {
    return this.deps.attempts.recoverInterrupted(this.deps.clock.now());
  }

  /** After the shutdown signal: waits for the attempts in flight (cut short) and records them, gives back claims not sent. */
  async close(): Promise<void> {
    await this.pumping?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight.values()]);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flush();
    const unsent = [...this.ready.values()].flat().concat(this.returned);
    this.ready.clear();
    this.returned = [];
    await this.deps.attempts.release(unsent);
    this.deps.sender.close();
  }

  /**
   * An endpoint changed (URL, secret, disabled, deleted): its claims not yet sent are given back,
   * so none goes out with what it was claimed with; they are claimed again with the new values.
   */
  endpointChanged(endpointId: string): void {
    const unsent = this.ready.get(endpointId) ?? [];
    this.ready.delete(endpointId);
    this.deps.sender.cancel?.(endpointId);
    this.queued.delete(endpointId);
    this.giveBack(unsent);
  }

  private logFailure(err: unknown): void {
    this.deps.logger.error('webhook dispatch failed', { error: err instanceof Error ? err.message : String(err) });
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
        if (this.deps.signal.aborted) return;
        if (this.outboxDirty) {
          this.outboxDirty = false;
          await this.deps.attempts.fanOutNew(this.deps.clock.now(), (made) => this.enqueueNew(made));
        }
        if (this.stale) {
          this.stale = false;
          this.fallingDue = false;
          await this.scan();
        } else if (this.fallingDue) {
          this.fallingDue = false;
          await this.scanFallenDue();
        } else {
          for (const t of this.runDry()) this.enqueue(t, await this.deps.attempts.dueOf(t, this.deps.clock.now()));
        }
        await this.startQueued();
      } while (this.again);
    })().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  /** Reads everything due into fresh queues. */
  private async scan(): Promise<void> {
    const now = this.deps.clock.now();
    const byTarget = new Map<string, DueDelivery[]>();
    this.lastFullScanAt = now.getTime();
    this.lastScanAt = now;
    for (const d of await this.deps.attempts.scanDue(now)) {
      const t = targetOf(d);
      const list = byTarget.get(t);
      if (list) list.push(d);
      else byTarget.set(t, [d]);
    }
    this.queued = new Map();
    this.cut = new Set();
    for (const [t, list] of byTarget) this.enqueue(t, list);
  }

  /**
   * New deliveries from the fan-out join their target's queue as they are, without a read: behind
   * what is queued, unless the target's last read was cut (then older due rows wait in the store
   * and the refill reads these in their turn). The fan-out's rows are already in hand, so a queue
   * takes more of them than a read would (NEW_QUEUED_PER_TARGET), within a bound on all queues.
   */
  private enqueueNew(made: DueDelivery[]): void {
    let room = NEW_QUEUED_MAX;
    for (const list of this.queued.values()) room -= list.length;
    for (const d of made) {
      const t = targetOf(d);
      if (this.cut.has(t)) continue;
      const list = this.queued.get(t);
      if (room <= 0 || (list?.length ?? 0) >= NEW_QUEUED_PER_TARGET) {
        this.cut.add(t);
        continue;
      }
      if (list) list.push(d);
      else this.queued.set(t, [d]);
      room--;
    }
  }

  /**
   * Appends the attempts that fell due since the last read (a retry's time came, or a claim whose
   * outcome was lost): nothing else becomes due by time alone, as new deliveries come queued from
   * the fan-out and anything given back or retried asks for a full scan.
   */
  private async scanFallenDue(): Promise<void> {
    const now = this.deps.clock.now();
    const since = this.lastScanAt;
    if (since === null || now.getTime() <= since.getTime()) return;
    this.lastScanAt = now;
    const fallen = await this.deps.attempts.scanDue(now, since);
    for (const d of fallen) {
      const t = targetOf(d);
      if (this.cut.has(t)) continue;
      const list = this.queued.get(t);
      if ((list?.length ?? 0) >= NEW_QUEUED_PER_TARGET) this.cut.add(t);
      else if (list) list.push(d);
      else this.queued.set(t, [d]);
    }
  }

  private enqueue(target: string, rows: DueDelivery[]): void {
    if (rows.length === 0) {
      this.queued.delete(target);
      this.cut.delete(target);
      return;
    }
    this.queued.set(target, rows);
    if (rows.length >= QUEUE_PER_TARGET) this.cut.add(target);
    else this.cut.delete(target);
  }

  /** Targets with room whose queue ran dry but whose last read was cut: they may have more due. */
  private runDry(): string[] {
    return [...this.cut].filter((t) => (this.queued.get(t)?.length ?? 0) === 0 && (this.perTarget.get(t) ?? 0) < this.handOver.perTarget);
  }

  /**
   * Claims from the queues, in one transaction, what the slots can take now plus more rounds per
   * target (so attempts start without waiting for a transaction), then starts what fits. A target
   * is topped up only once half its depth has gone, unless fewer than a round wait: claims come
   * in large batches and the slots never run dry for want of one. A target that answers slowly
   * is claimed only a round ahead, so its claims do not go stale while they wait.
   */
  private async startQueued(): Promise<void> {
    if (this.deps.signal.aborted) return;
    const round = this.limits.perTarget;
    let room = AHEAD_ROUNDS * this.limits.maxInFlight - this.inFlight.size - this.readyCount();
    const chosen: DueDelivery[] = [];
    for (const [t, list] of this.queued) {
      if (room <= 0) break;
      const depth = (this.quick.has(t) ? AHEAD_ROUNDS : SLOW_AHEAD_ROUNDS) * round;
      const waiting = this.ready.get(t)?.length ?? 0;
      const want = Math.min(room, depth - (this.perTarget.get(t) ?? 0) - waiting);
      if (want <= 0 || (want < depth / 2 && waiting >= round)) continue;
      const taken = list.splice(0, want);
      chosen.push(...taken);
      room -= taken.length;
      if (list.length === 0) this.queued.delete(t);
    }
    if (chosen.length > 0) {
      const claimed = await this.deps.attempts.claim(chosen, this.deps.clock.now(), () => this.takeOutcomes());
      if (claimed.length < chosen.length) this.stale = true;
      for (const c of claimed) {
        const t = targetOf(c.delivery);
        const list = this.ready.get(t);
        if (list) list.push(c);
        else this.ready.set(t, [c]);
      }
    }
    this.launchReady();
  }

  private readyCount(): number {
    let n = 0;
    for (const list of this.ready.values()) n += list.length;
    return n;
  }

  /** Starts claimed attempts while their target and the total have free slots; claims no longer fresh are given back. */
  private launchReady(): void {
    if (this.deps.signal.aborted) return;
    const now = this.deps.clock.now().getTime();
    const stale: Claimed[] = [];
    for (const [t, list] of this.ready) {
      // Only a quick target gets attempts handed over ahead of its slots: a slow one's would wait
      // on the sender for whole timeouts, and a claim must be sent while fresh.
      const bound = this.quick.has(t) ? this.handOver.perTarget : this.limits.perTarget;
      while (list.length > 0 && (this.perTarget.get(t) ?? 0) < bound && this.inFlight.size < this.handOver.maxInFlight) {
        const c = list.shift()!;
        if (now - c.claimedAt >= CLAIM_FRESH_MS) stale.push(c);
        else this.launch(c);
      }
      if (list.length === 0) this.ready.delete(t);
    }
    if (stale.length > 0) this.giveBack(stale);
  }

  /** The sender's unstarted attempts go back together, once those of one answer are all in. */
  private giveBackReturned(): void {
    queueMicrotask(() => {
      const claims = this.returned;
      this.returned = [];
      if (claims.length > 0 && !this.deps.signal.aborted) this.giveBack(claims);
      else this.returned.push(...claims);
    });
  }

  /** Claims not sent go back to the store, then what is due is read again. */
  private giveBack(claims: Claimed[]): void {
    this.deps.attempts.release(claims).then(
      () => this.rescan(),
      (err: unknown) => this.logFailure(err),
    );
  }

  private launch(c: Claimed): void {
    const d = c.delivery;
    const target = targetOf(d);
    this.perTarget.set(target, (this.perTarget.get(target) ?? 0) + 1);
    const started = this.deps.clock.now();
    const run = this.send(c, started)
      .then((result) => {
        if (result.sent === false) {
          this.returned.push(c);
          if (!this.deps.signal.aborted) this.giveBackReturned();
          return;
        }
        this.outcomes.push({ claimed: c, result, started, ended: this.deps.clock.now() });
        if (result.durationMs < QUICK_ANSWER_MS) this.quick.add(target);
        else this.quick.delete(target);
        // Written by the next claim, or by a flush when nothing is claimed within a few ms.
        this.flushTimer ??= setTimeout(() => {
          this.flushTimer = null;
          void this.flush();
        }, FLUSH_AFTER_MS);
      })
      .catch((err: unknown) => this.deps.logger.error('webhook attempt failed', { delivery_id: d.id, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        // The slot frees as soon as the answer is in: the claim keeps the delivery from being due
        // again, so the next attempt need not wait for this outcome's write.
        this.inFlight.delete(d.id);
        const left = (this.perTarget.get(target) ?? 1) - 1;
        if (left > 0) this.perTarget.set(target, left);
        else this.perTarget.delete(target);
        // Only targets with work are remembered: the set stays as small as the work in hand.
        if (left === 0 && !this.ready.has(target)) this.quick.delete(target);
        if (this.deps.signal.aborted) return;
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
    return this.deps.sender.post(d.url, { id: d.event_id, type: d.event_type, body: c.body }, secret, now, this.deps.signal, targetOf(d));
  }

  private takeOutcomes(): Outcome[] {
    const batch = this.outcomes;
    this.outcomes = [];
    return batch;
  }

  /** Writes the outcomes no claim carried, one transaction for all that finished meanwhile. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      while (this.outcomes.length > 0) await this.deps.attempts.record(this.takeOutcomes());
    })()
      .catch((err: unknown) => this.deps.logger.error('webhook outcomes not recorded', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }
}
