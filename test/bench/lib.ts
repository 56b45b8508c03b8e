import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

/**
 * Benchmark helpers. This machine is shared and noisy: every figure is printed beside a baseline
 * measured in the same run, and the ratio is what counts.
 */

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[i];
}

/** Runs `one()` `total` times with `concurrency` in flight; latency of each call, throughput overall. */
export async function load(one: (i: number) => Promise<void>, opts: { total: number; concurrency: number; warmup?: number }): Promise<LoadResult> {
  const warm = opts.warmup ?? Math.min(200, Math.floor(opts.total / 10));
  for (let i = 0; i < warm; i++) await one(-1 - i);
  const lat: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= opts.total) return;
      const t0 = process.hrtime.bigint();
      await one(i);
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  lat.sort((a, b) => a - b);
  return { requests: opts.total, seconds, perSecond: opts.total / seconds, p50Ms: percentile(lat, 50), p99Ms: percentile(lat, 99) };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One HTTP request over a keep-alive agent; resolves with status and body text. `decode: false`
 * leaves the body's bytes undecoded (its text is then empty), as a load client that only counts
 * answers would: decoding a compressed body as text costs the client more than the server spent.
 */
export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; decode?: boolean } = {},
): Promise<{ status: number; body: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, body: opts.decode === false ? '' : raw.toString('utf8'), bytes: raw.length });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

/** The baseline: a bare Koa hello-world on 127.0.0.1. */
export async function startHelloWorld(): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { hello: 'world' };
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

export const fmt = (n: number, digits = 1): string => n.toFixed(digits);

/** One line per measurement, and the ratio against the baseline with the goal it must meet. */
export function report(title: string, rows: Array<[string, string]>, ratio?: { name: string; value: number; goal: string; ok: boolean }): void {
  console.log(`\n== ${title}`);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(44)} ${v}`);
  if (ratio) console.log(`  ${ratio.name.padEnd(44)} ${ratio.value.toFixed(3)}  (goal ${ratio.goal}: ${ratio.ok ? 'met' : 'NOT met'})`);
}

export const rssMiB = (): number => process.memoryUsage().rss / 1024 / 1024;
