import { fetchSignal, getJson, isObject, own, sourceUrl } from './http-json';
import { MalformedRateError, parseRate } from './rate-value';
import { addQuote, type Quotes, type RateFetcher, type RateRequest } from './rate-source';

/** CoinGecko names coins by id, not ticker. A ticker missing here is simply not priced by this source. */
export const COINGECKO_IDS: Readonly<Record<string, string>> = {
  BTC: 'bitcoin',
  ETH: 'ethereum',
  USDT: 'tether',
  TRX: 'tron',
  USDC: 'usd-coin',
  DAI: 'dai',
  LTC: 'litecoin',
  DOGE: 'dogecoin',
  BNB: 'binancecoin',
  // The natives of the built-in EVM networks (src/chains/evm/presets.ts) beside ETH and BNB.
  POL: 'polygon-ecosystem-token',
  AVAX: 'avalanche-2',
};

/**
 * CoinGecko: `GET /api/v3/simple/price?ids=bitcoin,...&vs_currencies=usd,...&include_last_updated_at=true`
 * → `{bitcoin:{usd:68000.12, last_updated_at:1767225600}}` with JSON numbers. Unknown ids are left
 * out of the answer. Freshness counts from our fetch, like every source, so `last_updated_at` is
 * only checked for shape.
 */
export class CoingeckoFetcher implements RateFetcher {
  readonly kind = 'coingecko';

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async fetch(request: RateRequest, outer?: AbortSignal): Promise<Quotes> {
    const wanted = request.tickers.filter((t) => Object.hasOwn(COINGECKO_IDS, t));
    if (wanted.length === 0 || request.fiats.length === 0) return {};
    const ids = wanted.map((t) => COINGECKO_IDS[t]!).join(',');
    const vs = request.fiats.map((f) => f.toLowerCase()).join(',');
    const url = sourceUrl(this.url, '/api/v3/simple/price', `ids=${ids}&vs_currencies=${vs}&include_last_updated_at=true`);
    const { body } = await getJson(url, fetchSignal(this.timeoutMs, outer));
    if (!isObject(body)) throw new MalformedRateError('answer is not an object');
    const quotes: Quotes = {};
    for (const ticker of wanted) {
      const entry = own(body, COINGECKO_IDS[ticker]!);
      if (entry === undefined) continue;
      if (!isObject(entry)) throw new MalformedRateError(`entry for ${ticker} is not an object`);
      const updated = own(entry, 'last_updated_at');
      if (updated !== undefined && (typeof updated !== 'number' || !Number.isFinite(updated))) throw new MalformedRateError(`last_updated_at of ${ticker}`);
      for (const fiat of request.fiats) {
        const v = own(entry, fiat.toLowerCase());
        if (v === undefined) continue;
        if (typeof v !== 'number') throw new MalformedRateError(`${ticker}/${fiat} is not a number`);
        addQuote(quotes, ticker, fiat, parseRate(v));
      }
    }
    return quotes;
  }
}
