import test from 'ava';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { Payer } from '../../helpers/payer';
import { tempPostgres } from '../../helpers/pg-database';

test('on PostgreSQL: five tabs choosing coins at the same time get the same one coin and one address', async (t) => {
  const url = await tempPostgres(t);
  const f = await startInvoiceFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());
  const payer = new Payer(f.td.url);
  const open = (await f.api.post('/v1/invoices', { amount: '40', currency: 'USD' })).body;
  const before = await f.counts();
  const coins = [COINS.BTC, COINS.ETH, COINS.BTC, COINS.ETH, COINS.BTC];
  const answers = await Promise.all(coins.map((coin_id) => payer.choose(open.id, { coin_id })));
  t.deepEqual(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200],
  );
  t.is(new Set(answers.map((a) => `${a.body.coin.coin_id} ${a.body.address}`)).size, 1);
  t.is((await f.counts()).addresses, before.addresses + 1);
  const merchantSees = (await f.api.get(`/v1/invoices/${open.id}`)).body;
  t.is(merchantSees.address, answers[0]!.body.address);
  t.is(merchantSees.coin_id, answers[0]!.body.coin.coin_id);
});
