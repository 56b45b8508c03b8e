import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Local stand-ins for the rate providers, each answering in that provider's own format, so the
 * real fetchers can be pointed at them through the sources' `url`.
 */
export type ProviderKind = 'coinbase' | 'kraken' | 'coingecko';

/** ok: prices; fail: 500; hang: never answers; garbage: 200 with a body that is not JSON; wrong_shape: 200 with unrelated JSON. */
export type ProviderBehaviour = 'ok' | 'fail' | 'hang' | 'garbage' | 'wrong_shape';

const KRAKEN_ASSET: Record<string, string> = { BTC: 'XBT', DOGE: 'XDG' };
const KRAKEN_LEGACY_BASES = new Set(['XBT', 'ETH', 'LTC', 'XDG']);
const KRAKEN_LEGACY_QUOTES = new Set(['USD', 'EUR', 'GBP', 'CAD', 'JPY']);
const GECKO_IDS: Record<string, string> = { bitcoin: 'BTC', ethereum: 'ETH', tether: 'USDT', tron: 'TRX' };

export class FakeRateProvider {
  behaviour: ProviderBehaviour = 'ok';
  /** Kraken only: answer pairs under their legacy names (XXBTZUSD) or under the names asked (XBTUSD). */
  krakenKeys: 'legacy' | 'asked' = 'legacy';
  /** Every request's path and query, in order. */
  readonly requests: string[] = [];
  /** Unix seconds CoinGecko reports as last_updated_at. */
  geckoUpdatedAt = 1767225600;
  private readonly prices = new Map<string, Map<string, string>>();

  private constructor(
    readonly kind: ProviderKind,
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(kind: ProviderKind, prices: Record<string, Record<string, string>> = {}): Promise<FakeRateProvider> {
    let provider: FakeRateProvider | undefined;
    const server = createServer((req, res) => provider!.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    provider = new FakeRateProvider(kind, server, `http://127.0.0.1:${port}`);
    provider.setPrices(prices);
    return provider;
  }

  /** `price` is sent as the provider would: a string (Coinbase, Kraken) or a JSON number (CoinGecko). */
  setPrice(ticker: string, fiat: string, price: string): void {
    let row = this.prices.get(ticker);
    if (!row) this.prices.set(ticker, (row = new Map()));
    row.set(fiat, price);
  }

  setPrices(prices: Record<string, Record<string, string>>): void {
    for (const [ticker, row] of Object.entries(prices)) for (const [fiat, p] of Object.entries(row)) this.setPrice(ticker, fiat, p);
  }

  /** The provider no longer knows the ticker (or only that pair when `fiat` is given). */
  remove(ticker: string, fiat?: string): void {
    if (fiat === undefined) this.prices.delete(ticker);
    else this.prices.get(ticker)?.delete(fiat);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push(req.url ?? '');
    switch (this.behaviour) {
      case 'hang':
        return;
      case 'fail':
        res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>definitely not json');
        return;
      case 'wrong_shape':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"unexpected":[1,2,3]}');
        return;
      case 'ok':
        break;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const answer =
      this.kind === 'coinbase' && url.pathname === '/v2/exchange-rates'
        ? this.coinbase(url)
        : this.kind === 'kraken' && url.pathname === '/0/public/Ticker'
          ? this.kraken(url)
          : this.kind === 'coingecko' && url.pathname === '/api/v3/simple/price'
            ? this.coingecko(url)
            : { status: 404, body: '{"message":"not found"}' };
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  }

  private coinbase(url: URL): { status: number; body: string } {
    const currency = url.searchParams.get('currency') ?? '';
    const row = this.prices.get(currency);
    if (!row) return { status: 400, body: JSON.stringify({ errors: [{ id: 'invalid_request', message: 'Invalid currency' }] }) };
    // Coinbase lists many currencies besides fiats; one extra shows the fetcher picks what it needs.
    const rates: Record<string, string> = { [currency]: '1.0', ...Object.fromEntries(row) };
    return { status: 200, body: JSON.stringify({ data: { currency, rates } }) };
  }

  private kraken(url: URL): { status: number; body: string } {
    const result: Record<string, unknown> = {};
    for (const name of (url.searchParams.get('pair') ?? '').split(',')) {
      const base = name.slice(0, -3);
      const quote = name.slice(-3);
      const ticker = Object.entries(KRAKEN_ASSET).find(([, a]) => a === base)?.[0] ?? base;
      const price = this.prices.get(ticker)?.get(quote);
      if (price === undefined) return { status: 200, body: JSON.stringify({ error: ['EQuery:Unknown asset pair'] }) };
      const key =
        this.krakenKeys === 'asked'
          ? name
          : KRAKEN_LEGACY_BASES.has(base) && KRAKEN_LEGACY_QUOTES.has(quote)
            ? `X${base}Z${quote}`
            : base === 'USDT'
              ? `USDTZ${quote}`
              : name;
      result[key] = {
        a: [price, '1', '1.000'],
        b: [price, '1', '1.000'],
        c: [price, '0.00100000'],
        v: ['100.0', '200.0'],
        p: [price, price],
        t: [10, 20],
        l: [price, price],
        h: [price, price],
        o: price,
      };
    }
    return { status: 200, body: JSON.stringify({ error: [], result }) };
  }

  private coingecko(url: URL): { status: number; body: string } {
    const vs = (url.searchParams.get('vs_currencies') ?? '').split(',');
    const out: Record<string, Record<string, number>> = {};
    for (const id of (url.searchParams.get('ids') ?? '').split(',')) {
      const row = this.prices.get(GECKO_IDS[id] ?? '');
      if (!row) continue;
      const entry: Record<string, number> = {};
      for (const v of vs) {
        const price = row.get(v.toUpperCase());
        if (price !== undefined) entry[v] = Number(price);
      }
      out[id] = { ...entry, last_updated_at: this.geckoUpdatedAt };
    }
    return { status: 200, body: JSON.stringify(out) };
  }
}

export interface RateProviders {
  coinbase: FakeRateProvider;
  kraken: FakeRateProvider;
  coingecko: FakeRateProvider;
  close(): Promise<void>;
}

/** One server per provider, all quoting the same prices. */
export async function startRateProviders(prices: Record<string, Record<string, string>> = {}): Promise<RateProviders> {
  const [coinbase, kraken, coingecko] = await Promise.all([
    FakeRateProvider.start('coinbase', prices),
    FakeRateProvider.start('kraken', prices),
    FakeRateProvider.start('coingecko', prices),
  ]);
  return {
    coinbase,
    kraken,
    coingecko,
    close: async () => {
      await Promise.all([coinbase.close(), kraken.close(), coingecko.close()]);
    },
  };
}
