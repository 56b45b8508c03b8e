import type { RatesConfig } from '../../../src/config/schema';
import { FakeClock } from '../../../src/shared/clock';
import { createLogger, type Logger } from '../../../src/shared/logger';
import { RateEngine } from '../../../src/rates/engine';
import type { Quotes, RateFetcher } from '../../../src/rates/rate-source';

/** A remote source whose answer the test sets directly. */
export class StubFetcher implements RateFetcher {
  quotes: Quotes = {};
  failure: Error | undefined;
  calls = 0;
  /** While set, fetches wait for it. */
  gate: Promise<void> | undefined;

  constructor(readonly kind: 'coinbase' | 'kraken' | 'coingecko' = 'coinbase') {}

  async fetch(): Promise<Quotes> {
    this.calls++;
    if (this.gate) await this.gate;
    if (this.failure) throw this.failure;
    return structuredClone(this.quotes);
  }

  /** Quotes every listed ticker in USD. */
  usd(prices: Record<string, string>): this {
    this.quotes = Object.fromEntries(Object.entries(prices).map(([t, p]) => [t, { USD: p }]));
    return this;
  }
}

export interface StubbedEngine {
  engine: RateEngine;
  clock: FakeClock;
  logs: Array<Record<string, unknown>>;
}

/** An engine over the given stubs (in order) and fixed sources, pricing BTC, ETH, USDT in USD and EUR. */
export function stubbedEngine(
  stubs: StubFetcher[],
  opts: { fixed?: Array<Record<string, Record<string, string>>>; maxAge?: number; divergence?: number } = {},
): StubbedEngine {
  const clock = new FakeClock('2026-01-01T00:00:00.000Z');
  const logs: Array<Record<string, unknown>> = [];
  const logger: Logger = createLogger({ level: 'debug', write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const sources: RatesConfig = {
    sources: [
      ...stubs.map((s, i) => ({ kind: s.kind, url: `http://stub-${i}.invalid`, timeout_ms: 1000 })),
      ...(opts.fixed ?? []).map((rates) => ({ kind: 'fixed' as const, rates })),
    ],
    refresh_seconds: 30,
    max_age_seconds: opts.maxAge ?? 120,
    max_divergence_percent: opts.divergence ?? 1.5,
  };
  const engine = new RateEngine({
    sources,
    tickers: ['BTC', 'ETH', 'USDT'],
    fiats: ['USD', 'EUR'],
    clock,
    logger,
    createFetcher: (s) => stubs[Number(/stub-(\d+)/.exec(s.url)![1])]!,
  });
  return { engine, clock, logs };
}
