import type { RateSourceConfig, RatesConfig } from '../config/schema';
import type { Clock } from '../shared/clock';
import { ApiError, unavailable } from '../shared/errors';
import type { Logger } from '../shared/logger';
import { createFetcher } from './create-fetcher';
import { fixedQuotes } from './fixed.source';
import type { HttpRateSourceConfig, Quotes, RateFetcher, RateRequest } from './rate-source';
import { parseRate, RateDecimal } from './rate-value';

export interface RateQuote {
  /** Fiat per 1 coin unit, a normalised decimal string. */
  rate: string;
  /** When the oldest of the values that decided this rate was fetched. */
  updated_at: Date;
}

export interface RateEngineOptions {
  sources: RatesConfig;
  /** Distinct tickers of the catalogue. */
  tickers: readonly string[];
  fiats: readonly string[];
  clock: Clock;
  logger: Logger;
  /** Builds the fetcher of each remote source; tests pass stubs. */
  createFetcher?: (source: HttpRateSourceConfig) => RateFetcher;
}

interface Value {
  rate: RateDecimal;
  /** Null for a fixed source: always fresh. */
  fetchedAt: Date | null;
}

interface SourceState {
  kind: RateSourceConfig['kind'];
  index: number;
  fetcher: RateFetcher | null;
  /** By `pairKey`. Each value keeps its own fetch time, so a pair a source stops answering ages out alone. */
  values: Map<string, Value>;
  missing: string;
}

const pairKey = (ticker: string, fiat: string): string => `${ticker}/${fiat}`;

/** fetch() hides the network reason (refused, DNS, TLS) in `cause`: operators need it. */
const describe = (err: unknown): string => {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
};

/**
 * Fiat rates from several sources (PRODUCT §3): a value is fresh for `max_age_seconds` after its
 * fetch, fixed values always; one fresh value is used as is; two or more give their median, unless
 * any two are further apart than `max_divergence_percent` of the smaller, which makes the rate
 * unavailable. Errors never name a source; logs do.
 */
export class RateEngine {
  private readonly states: SourceState[];
  private readonly request: RateRequest;
  private readonly maxAgeMs: number;
  private readonly maxDivergence: RateDecimal;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private running: Promise<void> | undefined;

  constructor(opts: RateEngineOptions) {
    this.request = { tickers: [...opts.tickers], fiats: [...opts.fiats] };
    this.maxAgeMs = opts.sources.max_age_seconds * 1000;
    this.maxDivergence = new RateDecimal(opts.sources.max_divergence_percent);
    this.clock = opts.clock;
    this.logger = opts.logger;
    const build = opts.createFetcher ?? createFetcher;
    this.states = opts.sources.sources.map((source, index) => {
      const state: SourceState = { kind: source.kind, index, fetcher: null, values: new Map(), missing: '' };
      if (source.kind === 'fixed') this.store(state, fixedQuotes(source, this.request), null);
      else state.fetcher = build(source);
      return state;
    });
  }

  /** Fetches every remote source in parallel. Never rejects; a call during a refresh joins it. */
  refresh(signal?: AbortSignal): Promise<void> {
    this.running ??= Promise.all(this.states.map((s) => this.refreshSource(s, signal))).then(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** The current rate, or 503 `unavailable` when no fresh value exists or fresh values disagree. */
  rate(ticker: string, fiat: string): RateQuote {
    const now = this.clock.now();
    const key = pairKey(ticker, fiat);
    const fresh: Value[] = [];
    for (const s of this.states) {
      const v = s.values.get(key);
      if (v && (v.fetchedAt === null || now.getTime() - v.fetchedAt.getTime() <= this.maxAgeMs)) fresh.push(v);
    }
    if (fresh.length === 0) throw unavailable(`no current ${ticker} rate in ${fiat}; retry later`);
    fresh.sort((a, b) => a.rate.comparedTo(b.rate));
    const low = fresh[0]!.rate;
    const high = fresh[fresh.length - 1]!.rate;
    if (high.minus(low).times(100).gt(low.times(this.maxDivergence))) throw unavailable(`the ${ticker} rate in ${fiat} cannot be determined now; retry later`);
    const mid = fresh.length >> 1;
    const median = fresh.length % 2 === 1 ? fresh[mid]!.rate : fresh[mid - 1]!.rate.plus(fresh[mid]!.rate).div(2);
    const oldest = Math.min(...fresh.map((v) => (v.fetchedAt ?? now).getTime()));
    return { rate: median.toFixed(), updated_at: new Date(oldest) };
  }

  /** Every ticker's rate in `fiat`, null where it is unavailable. */
  snapshot(fiat: string): Map<string, RateQuote | null> {
    const out = new Map<string, RateQuote | null>();
    for (const ticker of this.request.tickers) {
      try {
        out.set(ticker, this.rate(ticker, fiat));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        out.set(ticker, null);
      }
    }
    return out;
  }

  private async refreshSource(state: SourceState, signal: AbortSignal | undefined): Promise<void> {
    if (!state.fetcher) return;
    const startedAt = this.clock.now();
    try {
      // `store` checks every value again: one that is not a positive decimal fails the whole source.
      this.store(state, await state.fetcher.fetch(this.request, signal), startedAt);
    } catch (err) {
      this.logger.warn('rate source failed; its last values are kept until they age out', {
        source: state.kind,
        source_index: state.index,
        error: describe(err),
      });
    }
  }

  private store(state: SourceState, quotes: Quotes, fetchedAt: Date | null): void {
    const received = new Map<string, Value>();
    const missing: string[] = [];
    for (const ticker of this.request.tickers) {
      const row = Object.hasOwn(quotes, ticker) ? quotes[ticker] : undefined;
      for (const fiat of this.request.fiats) {
        if (row && Object.hasOwn(row, fiat)) received.set(pairKey(ticker, fiat), { rate: new RateDecimal(parseRate(row[fiat])), fetchedAt });
        else missing.push(pairKey(ticker, fiat));
      }
    }
    for (const [k, v] of received) state.values.set(k, v);
    const missingNow = missing.join(',');
    if (missingNow !== state.missing && missing.length > 0)
      this.logger.warn('rate source does not price some pairs', { source: state.kind, source_index: state.index, pairs: missing });
    state.missing = missingNow;
  }
}
