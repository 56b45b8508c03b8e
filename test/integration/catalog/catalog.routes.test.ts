import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { catalogRoutes } from '../../../src/catalog/catalog.routes';
import { Catalog } from '../../../src/catalog/coins';
import { parseConfig } from '../../../src/config/schema';
import { createApp } from '../../../src/http/app';
import type { AppMiddleware, RouteGuards } from '../../../src/http/context';
import { RateEngine } from '../../../src/rates/engine';
import { FakeClock } from '../../../src/shared/clock';
import { ApiError } from '../../../src/shared/errors';
import { silentLogger } from '../../../src/shared/logger';

const config = parseConfig({
  chains: [
    { id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443' },
    { id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', tokens: [{ ticker: 'USDT', contract: '0xabc', decimals: 6 }] },
    {
      id: 'tron',
      kind: 'tron',
      full_node_url: 'http://127.0.0.1:8090',
      tokens: [{ ticker: 'USDT', contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }],
    },
  ],
  fiat: { enabled: ['USD', 'EUR', 'JPY'], default: 'USD' },
  rates: { sources: [{ kind: 'fixed', rates: { BTC: { USD: '68000.10', EUR: '62000' }, USDT: { USD: '1' } } }] },
});

/** Signed requests are simulated by an `x-test-auth` header; routes that need a permission refuse the others. */
const authenticate =
  (permission: unknown): AppMiddleware =>
  async (ctx, next) => {
    if (ctx.get('x-test-auth')) ctx.state.auth = { account: 'a' };
    else if (permission !== null) throw new ApiError(401, 'auth.missing_header', 'signature headers are required');
    await next();
  };
const guards: RouteGuards = { authenticate, signed: () => authenticate('read'), idempotent: (_ctx, next) => next() };

async function serve(t: import('ava').ExecutionContext) {
  const catalog = new Catalog(config.chains, config.fiat);
  const clock = new FakeClock('2026-01-01T00:00:00.000Z');
  const rates = new RateEngine({ sources: config.rates, tickers: catalog.tickers(), fiats: config.fiat.enabled, clock, logger: silentLogger });
  const app = createApp({ logger: silentLogger, trustProxy: 0, routers: [catalogRoutes({ catalog, rates, guards })] });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (path: string, signed = true) => {
    const res = await fetch(base + path, { headers: signed ? { 'x-test-auth': '1' } : {} });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
  };
  return { catalog, get };
}

test('GET /v1/currencies unsigned is the public catalogue, with maintenance shown as it changes', async (t) => {
  const { catalog, get } = await serve(t);
  const first = await get('/v1/currencies', false);
  t.is(first.status, 200);
  t.regex(first.type ?? '', /^application\/json/);
  t.deepEqual(
    first.body.items.map((i: any) => Object.keys(i)),
    Array(5).fill(['id', 'ticker', 'name', 'network', 'decimals', 'invoice_enabled', 'maintenance']),
  );
  t.deepEqual(first.body.items[0], {
    id: catalog.coins()[0]!.id,
    ticker: 'BTC',
    name: 'Bitcoin',
    network: 'bitcoin',
    decimals: 8,
    invoice_enabled: true,
    maintenance: false,
  });
  const tronUsdt = catalog.coins()[4]!;
  catalog.setMaintenance(tronUsdt.id, true);
  const second = await get('/v1/currencies', false);
  t.deepEqual(
    second.body.items.map((i: any) => [i.network, i.ticker, i.maintenance]),
    [
      ['bitcoin', 'BTC', false],
      ['ethereum', 'ETH', false],
      ['ethereum', 'USDT', false],
      ['tron', 'TRX', false],
      ['tron', 'USDT', true],
    ],
  );
  t.is((await get('/v1/currencies', true)).status, 200);
});

test('GET /v1/fiat-currencies gives the default fiat and every enabled one, JPY with 0 decimals', async (t) => {
  const { get } = await serve(t);
  const res = await get('/v1/fiat-currencies');
  t.is(res.status, 200);
  t.regex(res.type ?? '', /^application\/json/);
  t.deepEqual(res.body, {
    default: 'USD',
    items: [
      { code: 'USD', decimals: 2, invoice_enabled: true },
      { code: 'EUR', decimals: 2, invoice_enabled: true },
      { code: 'JPY', decimals: 0, invoice_enabled: true },
    ],
  });
  t.is((await get('/v1/fiat-currencies', false)).status, 401);
});

test('GET /v1/rates lists every coin, a ticker repeated on each network, null where no rate exists', async (t) => {
  const { catalog, get } = await serve(t);
  const res = await get('/v1/rates?fiat=USD');
  t.is(res.status, 200);
  const [btc, eth, usdtEth, trx, usdtTron] = catalog.coins();
  t.deepEqual(res.body, {
    fiat: 'USD',
    items: [
      { coin_id: btc!.id, ticker: 'BTC', network: 'bitcoin', rate: '68000.1', updated_at: '2026-01-01T00:00:00.000Z' },
      { coin_id: eth!.id, ticker: 'ETH', network: 'ethereum', rate: null, updated_at: null },
      { coin_id: usdtEth!.id, ticker: 'USDT', network: 'ethereum', rate: '1', updated_at: '2026-01-01T00:00:00.000Z' },
      { coin_id: trx!.id, ticker: 'TRX', network: 'tron', rate: null, updated_at: null },
      { coin_id: usdtTron!.id, ticker: 'USDT', network: 'tron', rate: '1', updated_at: '2026-01-01T00:00:00.000Z' },
    ],
  });
});

for (const query of ['', '?fiat=', '?fiat=GBP', '?fiat=usd', '?fiat=USD&fiat=EUR']) {
  test(`GET /v1/rates${query} is 400 validation_error on fiat`, async (t) => {
    const { get } = await serve(t);
    const res = await get(`/v1/rates${query}`);
    t.is(res.status, 400);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, 'fiat');
  });
}
