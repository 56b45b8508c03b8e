import { setMaxListeners } from 'node:events';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { AttemptStore, Claimed, Outcome } from './attempt.store';
import type { DeliverySigner } from './delivery-signer';
import { DispatchPolicy, ReadPlan } from './dispatch-policy';
import { DEFAULT_LIMITS, type DispatcherLimits } from './in-flight-limits';
import type { WebhookTransport } from './transport';

export { DEFAULT_LIMITS, type DispatcherLimits } from './in-flight-limits';

/**
 * How long a finished attempt's outcome waits for a claim's transaction to carry it. A crash in
 * that window only costs the log the answer: the attempt is then recorded as interrupted and the
 * delivery sent again on its schedule (at least once).
 */
const FLUSH_AFTER_MS = 20;

/**
 * The webhook delivery loop: claim → sign → POST → record.
 *
 * - claim (a pass: `runPass`): the outbox is fanned out into deliveries, what is due is read, and
 *   attempts are claimed in large batches. A claim counts the attempt and already plans the next
 *   one as if it failed, so an attempt is never sent twice, and a daemon that dies mid-attempt
 *   resumes at the planned time (at least once).
 * - sign, POST, record (an attempt: `deliver`): the signer makes the signed POST, the transport
 *   sends it within its bounds (transport.ts), and the outcome is written by the next claim's
 *   transaction (or a flush shortly after).
 *
 * What to read, claim and start is decided by the policy (dispatch-policy.ts): due rows queued per
 * target, slots bounded per target, per account and overall, so one slow endpoint or one account's
 * hanging receivers never hold back the others. A pass runs when the outbox has new rows, a
 * delivery is queued again, the one-second tick comes, or an attempt ends.
 */
export class WebhookDispatcher {
  private readonly policy: DispatchPolicy;
  private readonly reads = new ReadPlan();
  /** Attempts handed to the transport, by delivery id (to wait for them at idle and close). */
  private readonly inFlight = new Map<string, Promise<void>>();
  private pass: Promise<void> | null = null;
  private passAgain = false;
  private wakeScheduled = false;
  private outcomes: Outcome[] = [];
  /** Attempts the transport gave back unstarted (a stop or a change): given back to the store. */
  private unsent: Claimed[] = [];
  private flushing: Promise<void> | null = null;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      attempts: AttemptStore;
      signer: DeliverySigner;
      transport: WebhookTransport;
      clock: Clock;
      logger: Logger;
      /** The daemon's shutdown signal: no new attempts once aborted; those in flight are cut short. */
      signal: AbortSignal;
    },
    limits: DispatcherLimits = DEFAULT_LIMITS,
  ) {
    // Every attempt in flight listens to the one stop signal.
    setMaxListeners(0, this.deps.signal);
    // A transport that keeps the bounds itself may be handed its window's worth ahead.
    this.policy = new DispatchPolicy(limits, deps.transport.window);
  }

  /** The outbox has new rows: fans them out soon (and reads what is due only if that made deliveries). Fire and forget. */
  wake(): void {
    this.reads.outboxWritten();
    // Emits come in bursts (one timer each): they share one pass.
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.runPass().catch((err: unknown) => this.logFailure(err));
    });
  }

  /** A delivery was queued again (retry, replay, a claim given back): reads everything due soon. Fire and forget. */
  rescan(): void {
    this.reads.need('everything due');
    this.reads.outboxWritten();
    this.runPass().catch((err: unknown) => this.logFailure(err));
  }

  /**
   * The periodic pass: fans out new outbox rows, reads the attempts that fell due since the last
   * read (everything due, at start and every minute) and starts them; resolves when that pass is done.
   */
  tick(): Promise<void> {
    this.reads.tick(this.deps.clock.now());
    return this.runPass();
  }

  /** Resolves once no pass runs, no attempt is in flight and every outcome is written (tests and benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = this.pass !== null || this.inFlight.size > 0;
      // Outcomes are written once the work stops, not at every wake: a waiter changes no batching.
      if (!busy && this.outcomes.length > 0) void this.flush();
      if (!busy && !this.flushing) return;
      await Promise.allSettled([this.pass, this.flushing, ...this.inFlight.values()]);
    }
  }

  /** At start, before the first pass: see AttemptStore.recoverInterrupted. */
  recoverInterrupted(): Promise<number> {
    return this.deps.attempts.recoverInterrupted(this.deps.clock.now());
  }

  /** After the shutdown signal: waits for the attempts in flight (cut short) and records them, gives back claims not sent. */
  async close(): Promise<void> {
    await this.pass?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight.values()]);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flush();
    const unsent = this.policy.takeAllClaims().concat(this.unsent);
    this.unsent = [];
    await this.deps.attempts.release(unsent);
    this.deps.transport.close();
  }

  /**
   * An endpoint changed (URL, secret, disabled, deleted): its claims not yet sent are given back,
   * so none goes out with what it was claimed with; they are claimed again with the new values.
   */
  endpointChanged(endpointId: string): void {
    const unsent = this.policy.dropTarget(endpointId);
    this.deps.transport.cancel(endpointId);
    this.giveBack(unsent);
  }

  private logFailure(err: unknown): void {
    this.deps.logger.error('webhook dispatch failed', { error: err instanceof Error ? err.message : String(err) });
  }

  /** One pass at a time; a call during a pass runs another after it. */
  private runPass(): Promise<void> {
    if (this.pass) {
      this.passAgain = true;
      return this.pass;
    }
    this.pass = (async () => {
      do {
        this.passAgain = false;
        if (this.deps.signal.aborted) return;
        await this.readDue();
        await this.claim();
        this.startClaimed();
      } while (this.passAgain);
    })().finally(() => {
      this.pass = null;
    });
    return this.pass;
  }

  /** Fans out the outbox if it has new rows, then reads what the plan asks for into the queues. */
  private async readDue(): Promise<void> {
    const { attempts, clock } = this.deps;
    if (this.reads.takeOutbox()) await attempts.fanOutNew(clock.now(), (made) => this.policy.append(made));
    const now = clock.now();
    const plan = this.reads.takeRead(now);
    switch (plan.read) {
      case 'everything due':
        return this.policy.replaceDue(await attempts.scanDue(now));
      case 'fallen due':
        return this.policy.append(await attempts.scanDue(now, plan.since));
      case 'dry targets':
        for (const t of this.policy.dryTargets()) this.policy.refill(t, await attempts.dueOf(t, clock.now()));
        return;
      case 'nothing':
        return;
    }
  }

  /** Claims what the policy chooses, in one transaction that also records the outcomes in hand. */
  private async claim(): Promise<void> {
    if (this.deps.signal.aborted) return;
    const chosen = this.policy.chooseClaims();
    if (chosen.length === 0) return;
    const claimed = await this.deps.attempts.claim(chosen, this.deps.clock.now(), () => this.takeOutcomes());
    // Some were no longer due (another daemon, a change): the queues are read again.
    if (claimed.length < chosen.length) this.reads.need('everything due');
    this.policy.addClaims(claimed);
  }

  /** Starts claimed attempts the slots have room for; claims no longer fresh are given back. */
  private startClaimed(): void {
    if (this.deps.signal.aborted) return;
    const { start, expired } = this.policy.startable(this.deps.clock.now().getTime());
    for (const c of start) this.inFlight.set(c.delivery.id, this.deliver(c));
    if (expired.length > 0) this.giveBack(expired);
  }

  /** One attempt, its slot taken: sign, POST, and keep the outcome for the next claim (or a flush) to record. */
  private async deliver(c: Claimed): Promise<void> {
    const started = this.deps.clock.now();
    let answeredInMs: number | null = null;
    try {
      const post = await this.deps.signer.sign(c, started);
      const result = await this.deps.transport.post(post, this.deps.signal);
      if (result.sent === false) return this.giveBackUnsent(c);
      answeredInMs = result.durationMs;
      this.keepOutcome({ claimed: c, result, started, ended: this.deps.clock.now() });
    } catch (err) {
      this.deps.logger.error('webhook attempt failed', { delivery_id: c.delivery.id, error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.attemptEnded(c, answeredInMs);
    }
  }

  /**
   * The slot frees as soon as the answer is in: the claim keeps the delivery from being due again,
   * so the next attempt need not wait for this outcome's write.
   */
  private attemptEnded(c: Claimed, answeredInMs: number | null): void {
    this.inFlight.delete(c.delivery.id);
    this.policy.ended(c, answeredInMs);
    if (this.deps.signal.aborted) return;
    this.startClaimed();
    void this.runPass().catch((err: unknown) => this.logFailure(err));
  }

  /** Written by the next claim, or by a flush when nothing is claimed within a few ms. */
  private keepOutcome(outcome: Outcome): void {
    this.outcomes.push(outcome);
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, FLUSH_AFTER_MS);
  }

  /** The transport's unstarted attempts go back together, once those of one answer are all in. */
  private giveBackUnsent(c: Claimed): void {
    this.unsent.push(c);
    if (this.deps.signal.aborted) return;
    queueMicrotask(() => {
      const claims = this.unsent;
      this.unsent = [];
      if (claims.length > 0 && !this.deps.signal.aborted) this.giveBack(claims);
      else this.unsent.push(...claims);
    });
  }

  /** Claims not sent go back to the store, then what is due is read again. */
  private giveBack(claims: Claimed[]): void {
    this.deps.attempts.release(claims).then(
      () => this.rescan(),
      (err: unknown) => this.logFailure(err),
    );
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
