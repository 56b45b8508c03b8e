import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { DnsOptions } from '../shared/target-guard';
import { INTERRUPTED, type AttemptResult, type WebhookPost, type WebhookTransport } from './transport';

export interface ThreadTransportOptions {
  allowPrivate: boolean;
  /** The guard's resolver on the thread (`webhooks.dns`); DEFAULT_DNS if absent. */
  dns?: DnsOptions;
  timeoutMs?: number;
  /** Attempts in flight to one target, one account and overall: the dispatcher's bounds, kept on the thread. */
  perTarget: number;
  maxInFlight: number;
  perAccount?: number;
}

/** A post as it crosses to the thread: numbered, to match its result. */
export interface NumberedPost extends WebhookPost {
  id: number;
}

export type ToThread = { kind: 'posts'; posts: NumberedPost[] } | { kind: 'cancel'; target: string } | { kind: 'stop' };

/**
 * The HTTP transport on a thread of its own: the HTTP exchange, the target guard and the bounds on
 * attempts in flight run there, so the dispatcher's thread keeps only the store's work and a
 * delivery's two halves run side by side. The dispatcher hands over up to WINDOW times its bounds;
 * the rest wait on the thread in their target's line and start as slots free, without a round trip
 * between the threads. Posts made in one turn go over in one message, results come back batched.
 * The guard there resolves with `webhooks.dns` (a test that injects its own resolver uses
 * HttpTransport on the dispatcher's thread). If the thread dies, its attempts end as failed and the
 * next post starts a new one.
 */
export class ThreadTransport implements WebhookTransport {
  /** Hand-over allowance per bound: one round in flight and two waiting on the thread (results come back within a millisecond or so). */
  static readonly WINDOW = 3;
  readonly window = ThreadTransport.WINDOW;
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (r: AttemptResult) => void>();
  private outgoing: NumberedPost[] = [];
  private flushScheduled = false;
  private readonly watched = new WeakSet<AbortSignal>();

  constructor(private readonly options: ThreadTransportOptions) {}

  post(post: WebhookPost, signal?: AbortSignal): Promise<AttemptResult> {
    if (signal?.aborted) return Promise.resolve({ ok: false, responseStatus: null, error: INTERRUPTED, durationMs: 0 });
    // One listener per signal (the dispatcher has one for all its attempts): a stop cuts every attempt short.
    if (signal && !this.watched.has(signal)) {
      this.watched.add(signal);
      signal.addEventListener('abort', () => this.worker?.postMessage({ kind: 'stop' } satisfies ToThread), { once: true });
    }
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, resolve);
      this.outgoing.push({ ...post, id });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  /** A target changed: its attempts still waiting on the thread come back as not sent. */
  cancel(target: string): void {
    this.flush();
    this.worker?.postMessage({ kind: 'cancel', target } satisfies ToThread);
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
    if (posts.length > 0) this.start().postMessage({ kind: 'posts', posts } satisfies ToThread);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(path.join(__dirname, 'thread-transport.worker.js'), { workerData: this.options });
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
