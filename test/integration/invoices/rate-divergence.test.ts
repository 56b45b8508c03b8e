import test from 'ava';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';

test('when the rate sources disagree beyond the limit, a fiat invoice is 503 unavailable and nothing is written; a coin-priced one still works', async (t) => {
  // 68000 against 70000 is 2.9 % apart, over the default 1.5 %.
  const sources = [
    { kind: 'fixed', rates: { BTC: { USD: '68000' } } },
    { kind: 'fixed', rates: { BTC: { USD: '70000' } } },
  ];
  const f = await startInvoiceFixture({ overrides: { rates: { sources } } });
  t.teardown(() => f.stop());
  await f.td.daemon.rates.refresh();
  const before = await f.counts();
  const res = await f.api.post('/v1/invoices', { amount: '10', currency: 'USD', coin_id: COINS.BTC });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'unavailable');
  t.deepEqual(await f.counts(), before);
  const coin = await f.api.post('/v1/invoices', { amount: '0.001', currency: 'BTC', coin_id: COINS.BTC });
  t.is(coin.status, 201);
  t.like(coin.body, { amount_crypto: '0.001', amount_fiat: null, rate_locked: null });
});
