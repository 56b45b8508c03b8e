import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Counter, Registry } from 'prom-client';
import type Koa from 'koa';

/** prom-client is loaded with the first Metrics: a daemon without `metrics.listen` never needs it (80-90 ms of CPU). */
const promClient = (): typeof import('prom-client') => require('prom-client') as typeof import('prom-client');

/** Latency buckets of the API, in seconds: a signed read takes about a millisecond, an export seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricSource<L extends string> {
  name: string;
  help: string;
  labels: readonly L[];
  /** Called on each scrape: the current values. */
  read(): Promise<Array<{ labels: Record<L, string>; value: number }>> | Array<{ labels: Record<L, string>; value: number }>;
  /** `counter` for a value that only grows (counted from stored rows), `gauge` otherwise. */
  type?: 'gauge' | 'counter';
}

/**
 * The daemon's Prometheus metrics (prom-client): the API's requests, and values read on each scrape
 * from the daemon's parts. One registry per daemon (tests run several in one process).
 */
export class Metrics {
  readonly registry: Registry;
  private readonly requests = new RequestHistogram(
    'coinkeep_http_request_duration_seconds',
    'API requests by route template, method and status: count and latency',
  );

  constructor() {
    const { Registry, collectDefaultMetrics } = promClient();
    this.registry = new Registry();
    collectDefaultMetrics({ register: this.registry, prefix: 'coinkeep_' });
    this.registry.registerMetric(this.requests as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** Records one answered request. The route is the matched template (`/v1/invoices/:id`), never the URL, so the label set stays small. */
  observe(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
  }

  /** The Koa hook of createApp: times every request and records it by route template. */
  koaObserver(): (ctx: Koa.Context, seconds: number) => void {
    return (ctx, seconds) => {
      const route = (ctx as Koa.Context & { _matchedRoute?: string | RegExp })._matchedRoute;
      this.observe(ctx.method, typeof route === 'string' ? route : 'unmatched', ctx.status, seconds);
    };
  }

  /** A value read on each scrape. */
  add<L extends string>(source: MetricSource<L>): void {
    const { Counter, Gauge } = promClient();
    const Kind = source.type === 'counter' ? Counter : Gauge;
    new Kind<L>({
      name: source.name,
      help: source.help,
      labelNames: source.labels,
      registers: [this.registry],
      async collect() {
        const values = await source.read();
        this.reset();
        for (const v of values) {
          if (this instanceof Gauge) this.set(v.labels as Partial<Record<L, string>>, v.value);
          else (this as Counter<L>).inc(v.labels as Partial<Record<L, string>>, v.value);
        }
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

interface Series {
  labels: { method: string; route: string; status: string };
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request histogram, kept lean for the hot path: one map lookup by a short key and a walk of
 * 13 bounds per request (prom-client's labelled histogram hashes its label object on each
 * observation). It is exposed through the registry in prom-client's own histogram format.
 */
class RequestHistogram {
  readonly type = 'histogram';
  private readonly series: Series[] = [];
  /** route → method → status → series: lookups by the strings at hand, no key built per request. */
  private readonly index = new Map<string, Map<string, Map<number, Series>>>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.index.get(route);
    if (!byMethod) this.index.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) {
      s = { labels: { method, route, status: String(status) }, buckets: new Float64Array(BUCKETS.length), sum: 0, count: 0 };
      byStatus.set(status, s);
      this.series.push(s);
    }
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
    if (i < BUCKETS.length) s.buckets[i]!++;
    s.sum += seconds;
    s.count++;
  }

  get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.series) {
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  reset(): void {
    this.series.length = 0;
    this.index.clear();
  }
}

/** `GET /metrics` on its own listener (an operator's network only). Resolves once listening. */
export async function listenMetrics(
  metrics: Metrics,
  host: string,
  port: number,
  onError: (err: unknown) => void,
): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      (err: unknown) => {
        onError(err);
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return { server, url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/metrics` };
}
