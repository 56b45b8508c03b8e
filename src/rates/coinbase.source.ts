import { fetchSignal, getJson, isObject, own, sourceUrl } from './http-json';
import { parseRate, MalformedRateError } from './rate-value';
import { addQuote, type Quotes, type RateFetcher, type RateRequest } from './rate-source';

/**
 * Coinbase: `GET /v2/exchange-rates?currency=BTC` → `{data:{currency:"BTC", rates:{USD:"68000.12",...}}}`,
 * one request per ticker. A currency Coinbase does not know is answered 4xx with an `errors` list:
 * that ticker is absent, the others still count.
 */
export class CoinbaseFetcher implements RateFetcher {
  readonly kind = 'coinbase';

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async fetch(request: RateRequest, outer?: AbortSignal): Promise<Quotes> {
    const signal = fetchSignal(this.timeoutMs, outer);
    const quotes: Quotes = {};
    await Promise.all(
      request.tickers.map(async (ticker) => {
        const url = sourceUrl(this.url, '/v2/exchange-rates', `currency=${encodeURIComponent(ticker)}`);
        const { status, body } = await getJson(url, signal, [400, 404]);
        if (status !== 200) {
          if (isObject(body) && Array.isArray(body.errors)) return;
          throw new MalformedRateError(`HTTP ${status} without an errors list`);
        }
        const data = isObject(body) ? own(body, 'data') : undefined;
        const rates = isObject(data) ? own(data, 'rates') : undefined;
        if (!isObject(data) || !isObject(rates) || typeof data.currency !== 'string' || data.currency.toUpperCase() !== ticker)
          throw new MalformedRateError(`unexpected answer for ${ticker}`);
        for (const fiat of request.fiats) {
          const v = own(rates, fiat);
          if (v !== undefined) addQuote(quotes, ticker, fiat, parseRate(v));
        }
      }),
    );
    return quotes;
  }
}
