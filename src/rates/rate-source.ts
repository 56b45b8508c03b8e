import type { RateSourceConfig } from '../config/schema';

/** What the engine asks every source for: each ticker in each fiat. */
export interface RateRequest {
  tickers: readonly string[];
  fiats: readonly string[];
}

/** ticker → fiat → fiat per 1 coin unit, a normalised positive decimal string. A pair the source does not know is absent. */
export type Quotes = Record<string, Record<string, string>>;

export type HttpRateSourceConfig = Extract<RateSourceConfig, { url: string }>;

/** One remote price source. `fetch` rejects on any failure or malformed answer, never yields a bad value. */
export interface RateFetcher {
  readonly kind: string;
  fetch(request: RateRequest, signal?: AbortSignal): Promise<Quotes>;
}

export function addQuote(quotes: Quotes, ticker: string, fiat: string, rate: string): void {
  (quotes[ticker] ??= {})[fiat] = rate;
}
