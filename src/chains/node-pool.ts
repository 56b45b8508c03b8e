import type { ChainConfig, NodeEndpoint } from '../config/schema';
import type { Clock } from '../shared/clock';
import { NodeFault, NodeStale, NodeUnavailable, TransactionRefused, type BlockRef, type ChainNodeSet, type ChainReader } from './types';

/**
 * One endpoint of a chain: the family's client for its URL, and the family's reader over that
 * client alone (what the pool asks for a tip's freshness and for the quorum's hashes).
 */
export interface PoolMember<T> {
  transport: T;
  reader: ChainReader;
  /** A hosted quota: requests a day this endpoint may take; null: none. */
  requestsPerDay: number | null;
}

export interface NodePoolOptions {
  /** Endpoints that must report the same hash at a height before its block counts toward confirmations. */
  quorum: number;
  /** A tip older than this is stale; null: never (chains mined on demand). */
  staleAfterSeconds: number | null;
  clock: Clock;
  /**
   * The family's reading of an error its client throws: whether it says the endpoint could not
   * answer now (unreachable, timed out, an HTTP error without an answer). NodeUnavailable always
   * does; an answer of the node (a JSON-RPC error, a refusal) never does.
   */
  unavailable?: (err: unknown) => boolean;
}

/** The first pause of an endpoint that failed, doubled for each failure in a row up to the last. */
const FIRST_REST_MS = 1000;
const LAST_REST_MS = 300_000;
const DAY_MS = 86_400_000;

interface Endpoint<T> extends PoolMember<T> {
  /** `endpoint 2` in messages: never the URL, which may carry credentials or an API key. */
  name: string;
  /** Failures (or stale tips) in a row. */
  failures: number;
  /** Until then the endpoint is asked only after every other one (it failed or was behind). */
  restUntil: number;
  /** Until then the endpoint is not asked at all: it said it is over its rate limit. */
  limitedUntil: number;
  /** Its last tip was older than stale_after_seconds: reads go elsewhere until a tip of its own is fresh again. */
  stale: boolean;
  /** Requests not yet covered by the daily budget: a bucket that drains at `requestsPerDay`. */
  debt: number;
  debtAt: number;
}

/**
 * A chain's endpoints (PRODUCT §15), one pool per chain, under every family's transport: the
 * first healthy endpoint answers; one that cannot answer now is left for the next within the same
 * call and asked again first once its pause (doubling with each failure in a row) is over; one
 * that says it is rate limited is not asked again before its Retry-After (or its pause). A tip
 * older than `stale_after_seconds` makes its endpoint stale: the next one is used, and only when
 * every one that answers is behind does the chain hear NodeStale. Requests are counted against
 * each endpoint's `requests_per_day`, and polling waits until the budget covers them again.
 * Which endpoint answered never changes what was asked: a batch that fails on one is asked again
 * whole on the next.
 */
export class NodePool<T> implements ChainNodeSet {
  private readonly members: Array<Endpoint<T>>;

  constructor(
    members: ReadonlyArray<PoolMember<T>>,
    private readonly opts: NodePoolOptions,
  ) {
    if (members.length === 0) throw new Error('a node pool needs an endpoint');
    this.members = members.map((m, i) => ({ ...m, name: `endpoint ${i + 1}`, failures: 0, restUntil: 0, limitedUntil: 0, stale: false, debt: 0, debtAt: 0 }));
  }

  /** `fn` with the first healthy endpoint's client; with the next one while an endpoint cannot answer now. */
  use<R>(fn: (transport: T) => Promise<R>, signal?: AbortSignal): Promise<R> {
    return this.run((e) => fn(e.transport), null, signal);
  }

  tip(signal?: AbortSignal): Promise<BlockRef> {
    return this.run(
      (e) => e.reader.tip(signal),
      (tip) => this.behind(tip),
      signal,
    );
  }

  async agreedHeight(top: number, ours: (height: number) => Promise<string | undefined>, signal?: AbortSignal): Promise<number> {
    if (this.opts.quorum <= 1 || top < 0) return top;
    const now = this.now();
    // Each endpoint agrees up to the highest height it holds at or below `top` with our hash there.
    const reports = await Promise.all(
      this.members.map(async (e): Promise<number> => {
        if (e.limitedUntil > now) return -1;
        try {
          this.spend(e, now);
          const tip = await e.reader.tip(signal);
          const height = Math.min(tip.height, top);
          if (height < 0) return -1;
          let hash = tip.hash;
          if (height !== tip.height) {
            this.spend(e, now);
            hash = (await e.reader.header(height, signal)).hash;
          }
          return (await ours(height)) === hash ? height : -1;
        } catch (err) {
          if (signal?.aborted || !this.isUnavailable(err)) throw err;
          this.failed(e, err, this.now());
          return -1;
        }
      }),
    );
    reports.sort((a, b) => b - a);
    return reports[this.opts.quorum - 1] ?? -1;
  }

  pollDelayMs(baseMs: number): number {
    const now = this.now();
    let delay = baseMs;
    for (const e of this.members) {
      if (e.requestsPerDay === null) continue;
      this.drain(e, now);
      delay = Math.max(delay, Math.ceil((e.debt * DAY_MS) / e.requestsPerDay));
    }
    return delay;
  }

  /**
   * `fn` on each endpoint in turn (healthy ones in their order first, then resting ones) until one
   * answers and `check` finds nothing wrong with its answer (a reason when it does: stale).
   */
  private async run<R>(fn: (e: Endpoint<T>) => Promise<R>, check: ((answer: R) => string | null) | null, signal?: AbortSignal): Promise<R> {
    const now = this.now();
    const open = this.members.filter((e) => e.limitedUntil <= now);
    if (open.length === 0) {
      const wait = Math.min(...this.members.map((e) => e.limitedUntil)) - now;
      throw new NodeUnavailable(
        `${this.members.length === 1 ? 'the node' : 'every endpoint'} is rate limited; next try in ${Math.ceil(wait / 1000)} s`,
        wait,
        true,
      );
    }
    // A stale endpoint's tip is asked again once its pause is over; its other reads wait for a fresh tip.
    const ready = (e: Endpoint<T>): boolean => e.restUntil <= now && (check !== null || !e.stale);
    const order = [...open.filter(ready), ...open.filter((e) => !ready(e))];
    const failures: string[] = [];
    let lastFailure: unknown = null;
    let stale: string | null = null;
    for (const e of order) {
      signal?.throwIfAborted();
      this.spend(e, this.now());
      let answer: R;
      try {
        answer = await fn(e);
      } catch (err) {
        if (signal?.aborted || !this.isUnavailable(err)) throw err;
        this.failed(e, err, this.now());
        failures.push(`${e.name}: ${messageOf(err)}`);
        lastFailure = err;
        continue;
      }
      const wrong = check?.(answer) ?? null;
      if (wrong !== null) {
        this.rest(e, this.now());
        e.stale = true;
        stale ??= wrong;
        continue;
      }
      e.failures = 0;
      e.restUntil = 0;
      if (check !== null) e.stale = false;
      return answer;
    }
    // A node that answers but is behind says more than one that does not answer.
    if (stale !== null) throw new NodeStale(stale);
    if (this.members.length === 1) throw lastFailure;
    throw new NodeUnavailable(failures.join('; '));
  }

  private behind(tip: BlockRef): string | null {
    const limit = this.opts.staleAfterSeconds;
    if (limit === null || tip.time === undefined) return null;
    const age = this.now() / 1000 - tip.time;
    return age > limit ? `node behind: newest block ${spoken(age)} old` : null;
  }

  private isUnavailable(err: unknown): boolean {
    if (err instanceof NodeUnavailable) return true;
    if (err instanceof NodeFault || err instanceof TransactionRefused || err instanceof NodeStale) return false;
    return this.opts.unavailable?.(err) ?? false;
  }

  private failed(e: Endpoint<T>, err: unknown, now: number): void {
    if (err instanceof NodeUnavailable && err.rateLimited) {
      e.failures++;
      e.limitedUntil = now + (err.retryAfterMs ?? pause(e.failures));
      return;
    }
    this.rest(e, now);
  }

  private rest(e: Endpoint<T>, now: number): void {
    e.failures++;
    e.restUntil = now + pause(e.failures);
  }

  /** One request made to `e`, counted against its daily budget. */
  private spend(e: Endpoint<T>, now: number): void {
    if (e.requestsPerDay === null) return;
    this.drain(e, now);
    e.debt += 1;
  }

  private drain(e: Endpoint<T>, now: number): void {
    e.debt = Math.max(0, e.debt - ((now - e.debtAt) * e.requestsPerDay!) / DAY_MS);
    e.debtAt = now;
  }

  private now(): number {
    return this.opts.clock.now().getTime();
  }
}

/**
 * A client with the methods `methods` of one endpoint's client, each call made through the pool:
 * what a family's adapter reads and sends through. The caller's AbortSignal, when one of the
 * arguments, also ends the failover.
 */
export function pooledTransport<T, K extends keyof T>(pool: NodePool<T>, methods: readonly K[]): Pick<T, K> {
  const out = {} as Record<K, unknown>;
  for (const method of methods)
    out[method] = (...args: unknown[]) =>
      pool.use(
        (t) => (t[method] as (...a: unknown[]) => Promise<unknown>).apply(t, args),
        args.find((a): a is AbortSignal => a instanceof AbortSignal),
      );
  return out as Pick<T, K>;
}

function pause(failures: number): number {
  return Math.min(LAST_REST_MS, FIRST_REST_MS * 2 ** Math.min(failures - 1, 20));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An age as a person says it: `45 s`, `14 min`, `3 h`, `2 days`. */
export function spoken(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

/** A pool of a chain's endpoints, each with its own transport and a reader over it (a family's adapter factory builds it). */
export function poolOf<T>(
  chain: ChainConfig,
  clock: Clock,
  transport: (e: NodeEndpoint) => T,
  reader: (t: T) => ChainReader,
  /** What else, besides NodeUnavailable, the family's transport throws when the node did not answer. */
  unavailable?: (err: unknown) => boolean,
): NodePool<T> {
  const members = chain.nodes.endpoints.map((e): PoolMember<T> => {
    const t = transport(e);
    return { transport: t, reader: reader(t), requestsPerDay: e.requests_per_day };
  });
  return new NodePool(members, { quorum: chain.nodes.quorum, staleAfterSeconds: chain.nodes.stale_after_seconds, clock, unavailable });
}
