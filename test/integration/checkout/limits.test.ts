import test from 'ava';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { Payer } from '../../helpers/payer';

test('a client address that keeps posting coin choices is answered 429 with Retry-After and issues no more addresses', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const payer = new Payer(f.td.url);
  const open = await f.api.post('/v1/invoices', { amount: '10', currency: 'USD' });
  // Refused choices cost the bucket as accepted ones do: 20 a minute, then 429.
  for (let i = 0; i < 20; i++) t.is((await payer.choose(open.body.id, { coin_id: COINS.DAI })).status, 400);
  const before = await f.counts();
  const limited = await payer.choose(open.body.id, { coin_id: COINS.BTC });
  t.is(limited.status, 429);
  t.is(limited.body.error.code, 'rate_limited');
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.deepEqual(await f.counts(), before);
  // Reading the status has its own allowance.
  t.is((await payer.status(open.body.id)).status, 200);
});
