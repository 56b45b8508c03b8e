import type { RateSourceConfig } from '../config/schema';
import { parseRate } from './rate-value';
import { addQuote, type Quotes, type RateRequest } from './rate-source';

export type FixedRateSourceConfig = Extract<RateSourceConfig, { kind: 'fixed' }>;

/** The requested pairs of a `fixed` source's configured rates. They never age, so they are read once. */
export function fixedQuotes(source: FixedRateSourceConfig, request: RateRequest): Quotes {
  const quotes: Quotes = {};
  for (const ticker of request.tickers) {
    const row = Object.hasOwn(source.rates, ticker) ? source.rates[ticker] : undefined;
    if (!row) continue;
    for (const fiat of request.fiats) {
      if (Object.hasOwn(row, fiat)) addQuote(quotes, ticker, fiat, parseRate(row[fiat]));
    }
  }
  return quotes;
}
