import { fetchSignal, getJson, isObject, own, sourceUrl } from './http-json';
import { MalformedRateError, parseRate } from './rate-value';
import { addQuote, type Quotes, type RateFetcher, type RateRequest } from './rate-source';

/** Kraken's own asset codes where they differ from the ticker. */
const KRAKEN_ASSETS: Readonly<Record<string, string>> = { BTC: 'XBT', DOGE: 'XDG' };

const krakenAsset = (ticker: string): string => KRAKEN_ASSETS[ticker] ?? ticker;

/** The pair as asked for: `XBTUSD`. */
export const krakenPair = (ticker: string, fiat: string): string => `${krakenAsset(ticker)}${fiat}`;

/**
 * Every name Kraken may answer a pair under: the asked-for name (`XBTUSD`) or its legacy name with
 * X-prefixed crypto and Z-prefixed fiat (`XXBTZUSD`, `USDTZUSD`), in any combination.
 */
export const krakenResultKeys = (ticker: string, fiat: string): string[] => {
  const a = krakenAsset(ticker);
  const out: string[] = [];
  for (const base of [a, `X${a}`]) for (const quote of [fiat, `Z${fiat}`]) out.push(`${base}${quote}`);
  return out;
};

interface Pair {
  ticker: string;
  fiat: string;
  name: string;
}

const UNKNOWN_PAIR = /unknown asset pair/i;

/**
 * Kraken: `GET /0/public/Ticker?pair=XBTUSD,ETHEUR` → `{error:[], result:{XXBTZUSD:{c:["68000.1","0.01"],...}}}`;
 * the price is the last trade, `c[0]`. One unknown pair makes Kraken refuse the whole request, so
 * then each pair is asked alone, and pairs found unknown are not asked again while the process lives.
 */
export class KrakenFetcher implements RateFetcher {
  readonly kind = 'kraken';
  private readonly unknownPairs = new Set<string>();

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async fetch(request: RateRequest, outer?: AbortSignal): Promise<Quotes> {
    const pairs: Pair[] = request.tickers
      .flatMap((ticker) => request.fiats.map((fiat) => ({ ticker, fiat, name: krakenPair(ticker, fiat) })))
      .filter((p) => !this.unknownPairs.has(p.name));
    const quotes: Quotes = {};
    if (pairs.length === 0) return quotes;
    const signal = fetchSignal(this.timeoutMs, outer);
    if (pairs.length > 1 && (await this.ask(pairs, quotes, signal))) return quotes;
    await Promise.all(
      pairs.map(async (p) => {
        if (!(await this.ask([p], quotes, signal))) this.unknownPairs.add(p.name);
      }),
    );
    return quotes;
  }

  /** Adds the pairs' prices to `quotes`; false when Kraken refused the request for an unknown pair. */
  private async ask(pairs: Pair[], quotes: Quotes, signal: AbortSignal): Promise<boolean> {
    const url = sourceUrl(this.url, '/0/public/Ticker', `pair=${pairs.map((p) => encodeURIComponent(p.name)).join(',')}`);
    const { body } = await getJson(url, signal);
    if (!isObject(body) || !Array.isArray(body.error)) throw new MalformedRateError('no error list');
    // Kraken prefixes errors with E and warnings with W.
    const errors = (body.error as unknown[]).filter((e) => typeof e !== 'string' || e.startsWith('E'));
    if (errors.length > 0) {
      if (errors.every((e) => UNKNOWN_PAIR.test(String(e)))) return false;
      throw new MalformedRateError(`error ${JSON.stringify(errors).slice(0, 200)}`);
    }
    const result = own(body, 'result');
    if (!isObject(result)) throw new MalformedRateError('no result');
    const byKey = new Map<string, unknown>();
    for (const [k, v] of Object.entries(result)) byKey.set(k.replace('/', '').toUpperCase(), v);
    for (const p of pairs) {
      const key = krakenResultKeys(p.ticker, p.fiat).find((k) => byKey.has(k));
      if (key === undefined) continue;
      const entry = byKey.get(key);
      const last = isObject(entry) ? own(entry, 'c') : undefined;
      if (!Array.isArray(last)) throw new MalformedRateError(`${key} has no last trade`);
      addQuote(quotes, p.ticker, p.fiat, parseRate(last[0]));
    }
    return true;
  }
}
