import test from 'ava';
import { COINS } from '../../helpers/invoice-fixture';
import { tempPostgres } from '../../helpers/pg-database';
import { PAY_TO, startWithdrawalFixture } from '../../helpers/withdrawal-fixture';

/**
 * PostgreSQL cannot store U+0000 in text: a string field that let it through would fail its insert
 * (a 500) on one database and keep it on the other. Every body refuses it at the edge instead.
 */
for (const db of ['SQLite', 'PostgreSQL'] as const) {
  test(`${db}: a NUL character in a withdrawal comment, an address label or an invoice's metadata is 400 validation_error naming the field, and creates nothing`, async (t) => {
    const url = db === 'PostgreSQL' ? await tempPostgres(t) : undefined;
    const f = await startWithdrawalFixture(url ? { overrides: { database: { url } } } : {});
    t.teardown(() => f.stop());
    await f.fund('1');
    const api = await f.key(['read', 'withdraw', 'create_invoice', 'create_address']);
    const before = {
      ...(await f.counts()),
      balance: await f.balance(),
      invoices: (await api.get('/v1/invoices')).body.items.length,
      addresses: (await api.get('/v1/addresses')).body.items.length,
    };
    const cases: Array<[string, unknown, string]> = [
      ['/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, comment: 'rent\u0000' }, 'comment'],
      ['/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, 'x\u0000': 1 }, 'body'],
      ['/v1/addresses', { customer_id: 'c', coin_id: COINS.BTC, label: 'a\u0000b' }, 'label'],
      ['/v1/invoices', { amount: '5', currency: 'USD', metadata: { note: 'a\u0000b' } }, 'metadata.note'],
    ];
    for (const [target, body, field] of cases) {
      const res = await api.post(target, body);
      t.is(res.status, 400, `${target} ${JSON.stringify(res.body)}`);
      t.is(res.body.error.code, 'validation_error', target);
      t.is(res.body.error.details.field, field, target);
    }
    t.deepEqual(
      {
        ...(await f.counts()),
        balance: await f.balance(),
        invoices: (await api.get('/v1/invoices')).body.items.length,
        addresses: (await api.get('/v1/addresses')).body.items.length,
      },
      before,
    );
  });
}

for (const db of ['SQLite', 'PostgreSQL'] as const) {
  test(`${db}: a list filter holding a NUL character is 400 validation_error naming the filter, never a failed query`, async (t) => {
    const url = db === 'PostgreSQL' ? await tempPostgres(t) : undefined;
    const f = await startWithdrawalFixture(url ? { overrides: { database: { url } } } : {});
    t.teardown(() => f.stop());
    const api = await f.key(['read']);
    for (const [target, field] of [
      ['/v1/withdrawals?payout_id=a%00', 'payout_id'],
      ['/v1/addresses?customer_id=a%00', 'customer_id'],
      ['/v1/addresses?search=a%00', 'search'],
      ['/v1/invoices?order_id=a%00', 'order_id'],
    ] as const) {
      const res = await api.get(target);
      t.is(res.status, 400, `${target} ${JSON.stringify(res.body)}`);
      t.is(res.body.error.code, 'validation_error', target);
      t.is(res.body.error.details.field, field, target);
    }
  });
}
