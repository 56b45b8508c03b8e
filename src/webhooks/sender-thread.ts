import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DnsOptions } from '../shared/target-guard';
import type { AttemptResult, AttemptSender, OutgoingEvent } from './sender';

export interface SenderThreadData {
  allowPrivate: boolean;
  /** The guard's resolver on the thread (`webhooks.dns`); DEFAULT_DNS if absent. */
  dns?: DnsOptions;
  timeoutMs?: number;
  /** Attempts in flight to one target, one account and overall: the dispatcher's bounds, kept on the thread. */
  perTarget: number;
  maxInFlight: number;
  perAccount?: number;
}

export interface Post {
  id: number;
  /** The dispatcher's target key (an endpoint, or one invoice webhook_url): the bounds apply per key. */
  target: string;
  /** The target's account ('' when not told): the bound per account applies per key. */
  account: string;
  url: string;
  event: OutgoingEvent;
  secret: string;
  /** ms: the attempt's X-Timestamp comes from the dispatcher's clock. */
  now: number;
}

export type ToSender = { kind: 'posts'; posts: Post[] } | { kind: 'cancel'; target: string } | { kind: 'stop' };

/** The answer for an attempt that waited on the thread and never started (a stop, or its target changed). */
export const NOT_SENT: AttemptResult = { ok: false, responseStatus: null, error: 'not sent', durationMs: 0, sent: false };

const STOPPED = 'interrupted: the daemon stopped during the attempt';

/**
 * The webhook sender on a thread of its own: signing, the HTTP exchange, the target guard and the
 * bounds on attempts in flight run there, so the dispatcher's thread keeps only the store's work
 * and a delivery's two halves run side by side. The dispatcher hands over up to WINDOW times its
 * bounds; the rest wait on the thread in their target's line and start as slots free, without a
 * round trip between the threads. Posts made in one turn go over in one message, results come
 * back batched. The guard there resolves with `webhooks.dns` (a test that injects its own
 * resolver runs WebhookSender inline). If the thread dies, its attempts end as failed and the next post starts
 * a new one.
 */
export class ThreadedSender implements AttemptSender {
  /** Hand-over allowance per bound: one round in flight and two waiting on the thread (results come back within a millisecond or so). */
  static readonly WINDOW = 3;
  readonly window = ThreadedSender.WINDOW;
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (r: AttemptResult) => void>();
  private outgoing: Post[] = [];
  private flushScheduled = false;
  private readonly watched = new WeakSet<AbortSignal>();

  constructor(private readonly data: SenderThreadData) {}

  post(url: string, event: OutgoingEvent, secret: string, now: Date, signal?: AbortSignal, target = url, account = ''): Promise<AttemptResult> {
    if (signal?.aborted) return Promise.resolve({ ok: false, responseStatus: null, error: STOPPED, durationMs: 0 });
    // One listener per signal (the dispatcher has one for all its attempts): a stop cuts every attempt short.
    if (signal && !this.watched.has(signal)) {
      this.watched.add(signal);
      signal.addEventListener('abort', () => this.worker?.postMessage({ kind: 'stop' } satisfies ToSender), { once: true });
    }
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, resolve);
      this.outgoing.push({ id, target, account, url, event, secret, now: now.getTime() });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  /** A target changed: its attempts still waiting on the thread come back as not sent. */
  cancel(target: string): void {
    this.flush();
    this.worker?.postMessage({ kind: 'cancel', target } satisfies ToSender);
  }

  close(): void {
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    this.failAll('the sender stopped');
  }

  private flush(): void {
    this.flushScheduled = false;
    const posts = this.outgoing;
    this.outgoing = [];
    if (posts.length > 0) this.start().postMessage({ kind: 'posts', posts } satisfies ToSender);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(path.join(__dirname, 'sender.worker.js'), { workerData: this.data });
    worker.unref();
    worker.on('message', (batch: Array<{ id: number; result: AttemptResult }>) => {
      for (const { id, result } of batch) {
        const resolve = this.pending.get(id);
        this.pending.delete(id);
        resolve?.(result);
      }
    });
    const lost = () => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failAll('the sender thread stopped during the attempt');
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.worker = worker;
    return worker;
  }

  private failAll(error: string): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const resolve of waiting) resolve({ ok: false, responseStatus: null, error, durationMs: 0 });
  }
}
