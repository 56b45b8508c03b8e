import test from 'ava';
import { COINS } from '../../helpers/invoice-fixture';
import { tempPostgres } from '../../helpers/pg-database';
import { PAY_TO, startWithdrawalFixture } from '../../helpers/withdrawal-fixture';

/** On PostgreSQL the copies run in real concurrent transactions: the unique indexes are the only guard. */
for (const mode of ['the same Idempotency-Key', 'the same payout_id under different keys'] as const) {
  test(`on PostgreSQL, 50 parallel copies of one withdrawal with ${mode}: one withdrawal, one hold, the same id everywhere, never insufficient_funds`, async (t) => {
    const url = await tempPostgres(t);
    const f = await startWithdrawalFixture({ overrides: { database: { url } } });
    t.teardown(() => f.stop());
    await f.fund('0.15');
    const body = { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'p-par' };
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        f.api.post('/v1/withdrawals', body, { 'Idempotency-Key': mode === 'the same Idempotency-Key' ? 'par' : `par-${i}` }),
      ),
    );
    for (const a of answers) t.true(a.status === 201 || a.status === 200, JSON.stringify(a.body));
    t.is(new Set(answers.map((a) => a.body.id)).size, 1);
    t.deepEqual(await f.counts(), { withdrawals: 1, holds: 1 });
    t.deepEqual(await f.balance(), { available: '0.049975', hold: '0.100025' });
  });
}

test('on PostgreSQL, parallel withdrawals cannot pass the daily limit together: the account is locked while one is decided', async (t) => {
  const url = await tempPostgres(t);
  const f = await startWithdrawalFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());
  await f.fund('1');
  await f.setAccount({ daily_withdrawal_limit: '2000' });
  // Eight at once of 680 USD each, in concurrent transactions: two fit under 2000 USD, the third would not.
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.01', to_address: PAY_TO, comment: `parallel ${i}` })),
  );
  t.deepEqual(
    answers.map((a) => a.status),
    Array(8).fill(201),
    JSON.stringify(answers.map((a) => a.body)),
  );
  const statuses = answers.map((a) => `${a.body.status}/${a.body.review_reason}`).sort();
  t.deepEqual(statuses, ['pending/null', 'pending/null', ...Array(6).fill('review/limit')]);
});
