import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChainConfig } from '../config/schema';
import type { PublicBranchKey } from './child-key';

export interface LookaheadRequest extends PublicBranchKey {
  chainId: string;
  branch: number;
  from: number;
  count: number;
}

export interface LookaheadResult {
  chainId: string;
  branch: number;
  from: number;
  addresses: string[];
}

/** How many addresses past the last one issued are derived ahead, per (chain, branch). */
export const LOOKAHEAD_DEPTH = 512;
/** A bound on what waits unused (indexes taken by another daemon on a shared database). */
const MAX_READY = 100_000;
/**
 * Addresses a (chain, branch) issues inline before this daemon derives ahead for it: a branch
 * that issues an address now and then never starts the thread (it costs a second or so of CPU to
 * load the families' libraries there, more than years of inline derivations of a quiet branch).
 */
export const BUSY_AFTER = 8;

/**
 * Addresses derived ahead on a worker thread. An address is a pure function of (chain, branch,
 * index), but computing one is an elliptic-curve multiplication and a hash or two, a good part of
 * the event loop's time under a stream of invoice creations (docs/benchmarks.md). The index itself is still taken
 * in the write transaction (so an index is never reused); this only answers "which address is
 * index n" sooner, from the public branch key: after each allocation the next LOOKAHEAD_DEPTH indexes are
 * derived on the worker, and an index not ready yet is derived inline as before. Started once a
 * branch is busy (BUSY_AFTER); `close` ends the thread.
 */
export class AddressLookahead {
  private worker: Worker | null = null;
  private failed = false;
  private readonly ready = new Map<string, string>();
  /** Per (chain, branch): the highest index asked for, and the highest index issued. */
  private readonly asked = new Map<string, number>();
  private readonly issued = new Map<string, number>();
  /** Per (chain, branch): how many addresses this daemon issued. */
  private readonly count = new Map<string, number>();

  constructor(
    private readonly chains: readonly ChainConfig[],
    private readonly busyAfter = BUSY_AFTER,
  ) {}

  /** The address of an index if it was derived ahead (each is handed out once). */
  take(chainId: string, branch: number, index: number): string | undefined {
    const key = `${chainId}/${branch}/${index}`;
    const address = this.ready.get(key);
    if (address !== undefined) this.ready.delete(key);
    return address;
  }

  /** Index `index` was issued: have the next ones derived unless they are on their way. */
  issuedUpTo(chainId: string, branch: number, index: number, branchKey: () => PublicBranchKey): void {
    const b = `${chainId}/${branch}`;
    this.issued.set(b, Math.max(index, this.issued.get(b) ?? -1));
    const n = (this.count.get(b) ?? 0) + 1;
    this.count.set(b, n);
    if (this.failed || n < this.busyAfter) return;
    const asked = this.asked.get(b) ?? index;
    if (asked >= index + LOOKAHEAD_DEPTH / 2) return;
    const from = Math.max(asked, index) + 1;
    const to = index + LOOKAHEAD_DEPTH;
    this.asked.set(b, to);
    if (this.ready.size > MAX_READY) this.ready.clear();
    const req: LookaheadRequest = { chainId, branch, ...branchKey(), from, count: to - from + 1 };
    this.start().postMessage(req);
  }

  /** Whether the thread runs (a quiet daemon never starts it). */
  get running(): boolean {
    return this.worker !== null;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(path.join(__dirname, 'lookahead.worker.js'), { workerData: { chains: this.chains } });
    worker.unref();
    worker.on('message', (r: LookaheadResult) => {
      const issued = this.issued.get(`${r.chainId}/${r.branch}`) ?? -1;
      r.addresses.forEach((address, i) => {
        // An index issued meanwhile (derived inline) is never handed out again.
        if (r.from + i > issued) this.ready.set(`${r.chainId}/${r.branch}/${r.from + i}`, address);
      });
    });
    // Without the thread everything is derived inline, as before.
    worker.on('error', () => {
      this.failed = true;
      this.worker = null;
    });
    this.worker = worker;
    return worker;
  }
}
