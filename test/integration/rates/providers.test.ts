import test, { type ExecutionContext } from 'ava';
import type { RateSourceConfig } from '../../../src/config/schema';
import { RateEngine } from '../../../src/rates/engine';
import { FakeClock } from '../../../src/shared/clock';
import { ApiError } from '../../../src/shared/errors';
import { createLogger } from '../../../src/shared/logger';
import { FakeRateProvider, type ProviderKind } from '../../helpers/rate-providers';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const PRICES = {
  BTC: { USD: '68000.12', EUR: '62000.5' },
  ETH: { USD: '3500.25', EUR: '3200' },
  USDT: { USD: '1.0001', EUR: '0.92' },
  TRX: { USD: '0.1234', EUR: '0.113' },
};

interface Setup {
  engine: RateEngine;
  clock: FakeClock;
  providers: FakeRateProvider[];
  logs: Array<Record<string, unknown>>;
}

/** An engine over fresh local providers of the given kinds, each with its own copy of `prices`. */
async function setup(
  t: ExecutionContext,
  kinds: Array<ProviderKind | [ProviderKind, Record<string, Record<string, string>>]>,
  opts: { fiats?: string[]; timeoutMs?: number } = {},
): Promise<Setup> {
  const providers = await Promise.all(kinds.map((k) => (Array.isArray(k) ? FakeRateProvider.start(k[0], k[1]) : FakeRateProvider.start(k, PRICES))));
  t.teardown(() => Promise.all(providers.map((p) => p.close())));
  const clock = new FakeClock(T0);
  const logs: Array<Record<string, unknown>> = [];
  const sources: RateSourceConfig[] = providers.map((p) => ({ kind: p.kind, url: p.url, timeout_ms: opts.timeoutMs ?? 2000 }));
  const engine = new RateEngine({
    sources: { sources, refresh_seconds: 30, max_age_seconds: 120, max_divergence_percent: 1.5 },
    tickers: ['BTC', 'ETH', 'USDT', 'TRX'],
    fiats: opts.fiats ?? ['USD', 'EUR'],
    clock,
    logger: createLogger({ write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) }),
  });
  return { engine, clock, providers, logs };
}

const unavailable = (t: ExecutionContext, fn: () => unknown): void => {
  const err = t.throws(fn, { instanceOf: ApiError }) as ApiError;
  t.is(err.status, 503);
  t.is(err.code, 'unavailable');
  t.notRegex(JSON.stringify(err.toBody()), /coinbase|kraken|coingecko|127\.0\.0\.1/i);
};

const allRates = (engine: RateEngine, fiat: string) => Object.fromEntries([...engine.snapshot(fiat)].map(([ticker, q]) => [ticker, q?.rate ?? null]));

for (const kind of ['coinbase', 'kraken', 'coingecko'] as const) {
  test(`${kind}'s own format is read for every ticker and fiat`, async (t) => {
    const { engine, providers } = await setup(t, [kind]);
    await engine.refresh();
    t.deepEqual(allRates(engine, 'USD'), { BTC: '68000.12', ETH: '3500.25', USDT: '1.0001', TRX: '0.1234' });
    t.deepEqual(allRates(engine, 'EUR'), { BTC: '62000.5', ETH: '3200', USDT: '0.92', TRX: '0.113' });
    t.deepEqual(engine.rate('BTC', 'USD').updated_at, T0);
    t.true(providers[0]!.requests.length > 0);
  });
}

test('coinbase is asked once per ticker', async (t) => {
  const { engine, providers } = await setup(t, ['coinbase']);
  await engine.refresh();
  t.deepEqual(providers[0]!.requests.sort(), [
    '/v2/exchange-rates?currency=BTC',
    '/v2/exchange-rates?currency=ETH',
    '/v2/exchange-rates?currency=TRX',
    '/v2/exchange-rates?currency=USDT',
  ]);
});

test('kraken is asked for all pairs at once under its own asset names', async (t) => {
  const { engine, providers } = await setup(t, ['kraken'], { fiats: ['USD'] });
  await engine.refresh();
  t.deepEqual(providers[0]!.requests, ['/0/public/Ticker?pair=XBTUSD,ETHUSD,USDTUSD,TRXUSD']);
});

test('kraken pairs are read under the names asked as well as under the legacy names', async (t) => {
  const { engine, providers } = await setup(t, ['kraken']);
  providers[0]!.krakenKeys = 'asked';
  await engine.refresh();
  t.deepEqual(allRates(engine, 'USD'), { BTC: '68000.12', ETH: '3500.25', USDT: '1.0001', TRX: '0.1234' });
});

test('a pair kraken does not list is unavailable alone, and is not asked again', async (t) => {
  const { engine, providers, clock } = await setup(t, ['kraken'], { fiats: ['USD', 'EUR', 'UAH'] });
  await engine.refresh();
  t.deepEqual(allRates(engine, 'EUR'), { BTC: '62000.5', ETH: '3200', USDT: '0.92', TRX: '0.113' });
  t.deepEqual(allRates(engine, 'UAH'), { BTC: null, ETH: null, USDT: null, TRX: null });
  const asked = providers[0]!.requests.length;
  t.true(asked > 1);
  clock.advance(30_000);
  await engine.refresh();
  t.deepEqual(providers[0]!.requests.slice(asked), ['/0/public/Ticker?pair=XBTUSD,XBTEUR,ETHUSD,ETHEUR,USDTUSD,USDTEUR,TRXUSD,TRXEUR']);
  t.deepEqual(engine.rate('TRX', 'EUR').updated_at, clock.now());
});

test('coingecko is asked by coin id and fiat in lower case', async (t) => {
  const { engine, providers } = await setup(t, ['coingecko']);
  await engine.refresh();
  t.deepEqual(providers[0]!.requests, ['/api/v3/simple/price?ids=bitcoin,ethereum,tether,tron&vs_currencies=usd,eur&include_last_updated_at=true']);
});

test('a rate older than max_age_seconds is unavailable', async (t) => {
  const { engine, clock } = await setup(t, ['coinbase']);
  await engine.refresh();
  clock.advance(120_000);
  t.is(engine.rate('BTC', 'USD').rate, '68000.12');
  clock.advance(1_000);
  unavailable(t, () => engine.rate('BTC', 'USD'));
  t.deepEqual(allRates(engine, 'USD'), { BTC: null, ETH: null, USDT: null, TRX: null });
});

for (const kind of ['coinbase', 'kraken', 'coingecko'] as const) {
  test(`a ticker ${kind} does not list is unavailable for that ticker only`, async (t) => {
    const { engine, providers } = await setup(t, [kind]);
    providers[0]!.remove('ETH');
    await engine.refresh();
    unavailable(t, () => engine.rate('ETH', 'USD'));
    t.deepEqual(allRates(engine, 'USD'), { BTC: '68000.12', ETH: null, USDT: '1.0001', TRX: '0.1234' });
  });
}

for (const behaviour of ['fail', 'garbage', 'wrong_shape', 'hang'] as const) {
  test(`a source that starts to ${behaviour === 'hang' ? 'hang' : `answer ${behaviour}`} keeps its last values until they are stale`, async (t) => {
    const { engine, clock, providers, logs } = await setup(t, ['coingecko', 'kraken'], { timeoutMs: 1500 });
    await engine.refresh();
    providers[1]!.behaviour = behaviour;
    providers[0]!.setPrice('BTC', 'USD', '68100');
    clock.advance(90_000);
    await engine.refresh();
    // The failed source's value (68000.12, fetched at T0) still counts with the new one (68100).
    t.deepEqual(engine.rate('BTC', 'USD'), { rate: '68050.06', updated_at: T0 });
    t.true(logs.some((l) => l.level === 'warn' && l.source === 'kraken'));
    clock.advance(31_000);
    t.deepEqual(engine.rate('BTC', 'USD'), { rate: '68100', updated_at: new Date(T0.getTime() + 90_000) });
    clock.advance(90_000);
    unavailable(t, () => engine.rate('BTC', 'USD'));
  });
}

for (const [kind, bad] of [
  ['coinbase', '0'],
  ['coinbase', 'abc'],
  ['kraken', '-5'],
  ['kraken', '1e3'],
  ['coingecko', '0'],
  ['coingecko', 'abc'],
] as const) {
  test(`${kind} answering ${bad} for one pair fails as a whole, never giving 0 or NaN`, async (t) => {
    const { engine, providers, clock } = await setup(t, [kind]);
    await engine.refresh();
    providers[0]!.setPrice('TRX', 'EUR', bad);
    providers[0]!.setPrice('BTC', 'USD', '68001');
    clock.advance(1_000);
    await engine.refresh();
    t.deepEqual(engine.rate('BTC', 'USD'), { rate: '68000.12', updated_at: T0 });
    t.is(engine.rate('TRX', 'EUR').rate, '0.113');
  });
}

test('two sources that disagree make the rate unavailable', async (t) => {
  const { engine } = await setup(t, ['coinbase', ['kraken', { ...PRICES, BTC: { USD: '70000', EUR: '62000.5' } }]]);
  await engine.refresh();
  unavailable(t, () => engine.rate('BTC', 'USD'));
  t.is(engine.rate('BTC', 'EUR').rate, '62000.5');
});

test('three sources with one outlier are still unavailable: every pair must agree', async (t) => {
  const { engine } = await setup(t, ['coinbase', 'coingecko', ['kraken', { ...PRICES, ETH: { USD: '3600', EUR: '3200' } }]]);
  await engine.refresh();
  unavailable(t, () => engine.rate('ETH', 'USD'));
  t.is(engine.rate('ETH', 'EUR').rate, '3200');
});

test('agreeing sources give their median', async (t) => {
  const { engine } = await setup(t, [
    ['coinbase', { ...PRICES, BTC: { USD: '68000', EUR: '62000' } }],
    ['kraken', { ...PRICES, BTC: { USD: '68100.5', EUR: '62010' } }],
    ['coingecko', { ...PRICES, BTC: { USD: '68020.25', EUR: '62030' } }],
  ]);
  await engine.refresh();
  t.is(engine.rate('BTC', 'USD').rate, '68020.25');
  t.is(engine.rate('BTC', 'EUR').rate, '62010');
  t.is(engine.rate('USDT', 'USD').rate, '1.0001');
});

test('two agreeing sources give the exact mean', async (t) => {
  const { engine } = await setup(
    t,
    [
      ['coinbase', { TRX: { USD: '0.1233' } }],
      ['coingecko', { TRX: { USD: '0.1234' } }],
    ],
    { fiats: ['USD'] },
  );
  await engine.refresh();
  t.is(engine.rate('TRX', 'USD').rate, '0.12335');
});
