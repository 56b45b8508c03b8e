import test from 'ava';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { accountBook } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { COINS, startInvoiceFixture } from '../../helpers/invoice-fixture';
import { tempPostgres } from '../../helpers/pg-database';

test('on PostgreSQL: payments, top-up, revert and the ledger stay exact; parallel copies of one order make one invoice', async (t) => {
  const url = await tempPostgres(t);
  const f = await startInvoiceFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());

  const inv = (await f.api.post('/v1/invoices', { amount: '1.5', currency: 'ETH', coin_id: COINS.ETH })).body;
  const eth = f.chain('ethereum');
  await eth.pay(inv.address, COINS.ETH, '1');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'underpaid');
  const topUp = await eth.pay(inv.address, COINS.ETH, '0.5');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'paid');
  await eth.revert(topUp);
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.like(got, { status: 'underpaid', paid_amount: '1', late_payment: false });
  const bal = await f.td.daemon.ledger.balance(f.td.daemon.store.read, accountBook(f.accountId), COINS.ETH);
  t.is(bal.available.toString(), '1');
  t.true((await f.td.daemon.store.snapshot((em) => verifyLedger(em))).ok);

  const body = { amount: '9', currency: 'USD', order_id: 'pg-order', idempotency_by_order_id: true };
  const answers = await Promise.all(
    Array.from({ length: 5 }, (_, i) => f.api.post('/v1/invoices', { ...body, description: undefined, amount: i % 2 ? '9.0' : '9' })),
  );
  t.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 201]);
  t.is(new Set(answers.map((a) => a.body.id)).size, 1);
  t.is(await f.td.daemon.store.read.count(InvoiceEntity, { where: { order_id: 'pg-order' } }), 1);
});
