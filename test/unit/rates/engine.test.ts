import test from 'ava';
import { ApiError } from '../../../src/shared/errors';
import { StubFetcher, stubbedEngine } from './stub-fetcher';

const T0 = new Date('2026-01-01T00:00:00.000Z');

const isUnavailable = (t: import('ava').ExecutionContext, fn: () => unknown): ApiError => {
  const err = t.throws(fn, { instanceOf: ApiError }) as ApiError;
  t.is(err.status, 503);
  t.is(err.code, 'unavailable');
  t.notRegex(err.message, /coinbase|kraken|coingecko|fixed|stub|source/i);
  t.notRegex(JSON.stringify(err.details), /coinbase|kraken|coingecko|fixed|stub|source/i);
  return err;
};

test('one fresh source is used as it is, normalised, with its fetch time', async (t) => {
  const { engine } = stubbedEngine([new StubFetcher().usd({ BTC: '68000.1200' })]);
  await engine.refresh();
  t.deepEqual(engine.rate('BTC', 'USD'), { rate: '68000.12', updated_at: T0 });
});

test('two fresh sources give their mean, computed exactly', async (t) => {
  const { engine } = stubbedEngine([
    new StubFetcher().usd({ BTC: '0.1', ETH: '3000.000000000000000001' }),
    new StubFetcher().usd({ BTC: '0.1001', ETH: '3000.000000000000000002' }),
  ]);
  await engine.refresh();
  t.is(engine.rate('BTC', 'USD').rate, '0.10005');
  t.is(engine.rate('ETH', 'USD').rate, '3000.0000000000000000015');
});

test('three fresh sources give the middle value, four the mean of the middle two', async (t) => {
  const three = stubbedEngine(['100.2', '100', '100.5'].map((p) => new StubFetcher().usd({ BTC: p })));
  await three.engine.refresh();
  t.is(three.engine.rate('BTC', 'USD').rate, '100.2');

  const four = stubbedEngine(['100', '101', '100.5', '100.8'].map((p) => new StubFetcher().usd({ BTC: p })));
  await four.engine.refresh();
  t.is(four.engine.rate('BTC', 'USD').rate, '100.65');
});

test('two sources apart by exactly max_divergence_percent of the smaller still give a rate', async (t) => {
  const { engine } = stubbedEngine([new StubFetcher().usd({ BTC: '100' }), new StubFetcher().usd({ BTC: '101.5' })]);
  await engine.refresh();
  t.is(engine.rate('BTC', 'USD').rate, '100.75');
});

test('two sources apart by more than max_divergence_percent of the smaller make the rate unavailable', async (t) => {
  // 1.5 is 1.5 % of the larger (100) but 1.52 % of the smaller (98.5).
  const { engine } = stubbedEngine([new StubFetcher().usd({ BTC: '98.5', ETH: '10' }), new StubFetcher().usd({ BTC: '100', ETH: '10' })]);
  await engine.refresh();
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
  t.is(engine.rate('ETH', 'USD').rate, '10');
});

test('any pair of fresh sources too far apart makes the rate unavailable, even when the median has close neighbours', async (t) => {
  const { engine } = stubbedEngine(['100', '101', '102'].map((p) => new StubFetcher().usd({ BTC: p })));
  await engine.refresh();
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
});

test('a value is fresh up to max_age_seconds after its fetch and unavailable after', async (t) => {
  const { engine, clock } = stubbedEngine([new StubFetcher().usd({ BTC: '68000' })], { maxAge: 120 });
  await engine.refresh();
  clock.advance(120_000);
  t.deepEqual(engine.rate('BTC', 'USD'), { rate: '68000', updated_at: T0 });
  clock.advance(1);
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
});

test('no value at all is unavailable, before any refresh and for an unknown pair', (t) => {
  const { engine } = stubbedEngine([new StubFetcher().usd({ BTC: '68000' })]);
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
  isUnavailable(t, () => engine.rate('DOGE', 'USD'));
  isUnavailable(t, () => engine.rate('BTC', 'JPY'));
});

test('a stale source drops out and the fresh ones decide alone', async (t) => {
  const steady = new StubFetcher().usd({ BTC: '100' });
  const failing = new StubFetcher().usd({ BTC: '150' });
  const { engine, clock } = stubbedEngine([steady, failing]);
  await engine.refresh();
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
  failing.failure = new Error('HTTP 500');
  clock.advance(121_000);
  await engine.refresh();
  t.deepEqual(engine.rate('BTC', 'USD'), { rate: '100', updated_at: clock.now() });
});

test('a failed source keeps its last values and their time until they age out', async (t) => {
  const stub = new StubFetcher().usd({ BTC: '100' });
  const { engine, clock, logs } = stubbedEngine([stub]);
  await engine.refresh();
  stub.failure = new Error('connect ECONNREFUSED');
  clock.advance(60_000);
  await engine.refresh();
  t.deepEqual(engine.rate('BTC', 'USD'), { rate: '100', updated_at: T0 });
  const warn = logs.find((l) => l.level === 'warn' && String(l.msg).includes('failed'));
  t.like(warn, { source: 'coinbase', error: 'connect ECONNREFUSED' });
  clock.advance(60_001);
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
});

test('a pair a source stops answering ages out alone', async (t) => {
  const stub = new StubFetcher().usd({ BTC: '100', ETH: '10' });
  const { engine, clock } = stubbedEngine([stub]);
  await engine.refresh();
  stub.usd({ BTC: '101' });
  clock.advance(100_000);
  await engine.refresh();
  t.deepEqual(engine.rate('ETH', 'USD'), { rate: '10', updated_at: T0 });
  t.deepEqual(engine.rate('BTC', 'USD'), { rate: '101', updated_at: clock.now() });
  clock.advance(30_000);
  isUnavailable(t, () => engine.rate('ETH', 'USD'));
  t.is(engine.rate('BTC', 'USD').rate, '101');
});

for (const bad of ['0', '0.000', '-1', '1e5', 'NaN', '', ' 1', 'abc', '1,5']) {
  test(`a source answering ${JSON.stringify(bad)} for one pair fails as a whole and keeps its last values`, async (t) => {
    const stub = new StubFetcher().usd({ BTC: '100', ETH: '10' });
    const { engine, clock, logs } = stubbedEngine([stub]);
    await engine.refresh();
    stub.usd({ BTC: '105', ETH: bad });
    clock.advance(1000);
    await engine.refresh();
    t.deepEqual(engine.rate('BTC', 'USD'), { rate: '100', updated_at: T0 });
    t.is(engine.rate('ETH', 'USD').rate, '10');
    t.true(logs.some((l) => l.level === 'warn' && l.source === 'coinbase'));
  });
}

test('a fixed source is always fresh and dated now', async (t) => {
  const { engine, clock } = stubbedEngine([], { fixed: [{ USDT: { USD: '1.00', EUR: '0.92' } }] });
  clock.advance(86_400_000);
  t.deepEqual(engine.rate('USDT', 'EUR'), { rate: '0.92', updated_at: clock.now() });
  t.is(engine.rate('USDT', 'USD').rate, '1');
  await engine.refresh();
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
});

test('a fixed source takes part in the median and in the divergence rule', async (t) => {
  const remote = new StubFetcher().usd({ USDT: '1.001', BTC: '70000' });
  const { engine, clock } = stubbedEngine([remote], { fixed: [{ USDT: { USD: '1' }, BTC: { USD: '60000' } }] });
  await engine.refresh();
  t.deepEqual(engine.rate('USDT', 'USD'), { rate: '1.0005', updated_at: T0 });
  isUnavailable(t, () => engine.rate('BTC', 'USD'));
  clock.advance(121_000);
  t.deepEqual(engine.rate('BTC', 'USD'), { rate: '60000', updated_at: clock.now() });
});

test('snapshot gives every ticker its rate or null', async (t) => {
  const { engine } = stubbedEngine([new StubFetcher().usd({ BTC: '68000', USDT: '1' })]);
  await engine.refresh();
  t.deepEqual(
    [...engine.snapshot('USD')],
    [
      ['BTC', { rate: '68000', updated_at: T0 }],
      ['ETH', null],
      ['USDT', { rate: '1', updated_at: T0 }],
    ],
  );
  t.deepEqual([...engine.snapshot('EUR').values()], [null, null, null]);
});

test('refresh never rejects, and a refresh asked during one joins it', async (t) => {
  let open!: () => void;
  const stub = new StubFetcher().usd({ BTC: '1' });
  stub.gate = new Promise((resolve) => (open = resolve));
  const broken = new StubFetcher('kraken');
  broken.failure = new Error('boom');
  const { engine, logs } = stubbedEngine([stub, broken]);
  const first = engine.refresh();
  const second = engine.refresh();
  t.is(first, second);
  open();
  await t.notThrowsAsync(first);
  t.is(stub.calls, 1);
  t.true(logs.some((l) => l.level === 'warn' && l.source === 'kraken' && l.error === 'boom'));
  stub.gate = undefined;
  await engine.refresh();
  t.is(stub.calls, 2);
});

test('a source that does not price some pairs is logged once per change, not on every refresh', async (t) => {
  const stub = new StubFetcher().usd({ BTC: '1', ETH: '1', USDT: '1' });
  const { engine, logs } = stubbedEngine([stub]);
  const missingLogs = () => logs.filter((l) => String(l.msg).includes('does not price')).length;
  await engine.refresh();
  await engine.refresh();
  t.is(missingLogs(), 1);
  stub.usd({ BTC: '1', ETH: '1' });
  await engine.refresh();
  t.is(missingLogs(), 2);
});
