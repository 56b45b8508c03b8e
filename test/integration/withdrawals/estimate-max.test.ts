/**
 * Withdraw everything (PRODUCT §14): `POST /v1/withdrawals/estimate` with `amount: "max"` answers the
 * largest amount whose total_debit fits the available balance, priced like any estimate; it is
 * refused like the other estimate inputs, and changes nothing.
 */
import test, { type ExecutionContext } from 'ava';
import { Amount } from '../../../src/shared/amount';
import { COINS, type ApiResponse } from '../../helpers/invoice-fixture';
import { PAY_TO, RESERVED_FEE, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

async function fixture(t: ExecutionContext, funds?: string): Promise<WithdrawalFixture> {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  if (funds) await f.fund(funds);
  return f;
}

const estimateMax = (f: WithdrawalFixture, over: Record<string, unknown> = {}) =>
  f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: 'max', to_address: PAY_TO, ...over });

function assertError(t: ExecutionContext, res: ApiResponse, status: number, code: string, details: Record<string, unknown>) {
  t.is(res.status, status, JSON.stringify(res.body));
  t.is(res.body.error.code, code);
  t.like(res.body.error.details, details);
}

test('amount "max" is the available balance less the fees; a withdrawal of that amount takes all of available', async (t) => {
  const f = await fixture(t, '1');
  const est = await estimateMax(f);
  t.is(est.status, 200, JSON.stringify(est.body));
  t.like(est.body, {
    coin_id: COINS.BTC,
    amount: '0.999975',
    platform_fee: '0',
    network_fee_reserved: RESERVED_FEE,
    network_fee_mode: 'reserved',
    total_debit: '1',
  });
  const actual = await estimateMax(f, { network_fee_mode: 'actual' });
  t.like(actual.body, { amount: '0.999975', network_fee_mode: 'actual', total_debit: '1' });
  const w = await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: est.body.amount, to_address: PAY_TO });
  t.is(w.status, 201, JSON.stringify(w.body));
  t.is(w.body.total_debit, '1');
  t.deepEqual(await f.balance(), { available: '0', hold: '1' });
});

test('with a platform fee, amount "max" is the largest amount whose amount, platform fee and network fee fit available: a satoshi more does not', async (t) => {
  const f = await fixture(t, '1');
  await f.setAccount({ platform_fee_percent: '1.5' });
  const est = await estimateMax(f);
  t.is(est.status, 200, JSON.stringify(est.body));
  const { amount, platform_fee, network_fee_reserved, total_debit } = est.body;
  t.is(Amount.of(amount).plus(Amount.of(platform_fee)).plus(Amount.of(network_fee_reserved)).toString(), total_debit);
  t.true(Amount.of(total_debit).lte(Amount.of('1')));
  const more = await f.api.post('/v1/withdrawals/estimate', {
    coin_id: COINS.BTC,
    amount: Amount.of(amount).plus(Amount.of('0.00000001')).toString(),
    to_address: PAY_TO,
  });
  t.true(Amount.of(more.body.total_debit).gt(Amount.of('1')), `${more.body.total_debit} fits too`);
});

test('amount "max" that cannot pay the least withdrawal and its fees is 409 conflict (insufficient_funds); another word is 400 validation_error on amount, and so is "max" on a withdrawal itself; nothing is created or held', async (t) => {
  const f = await fixture(t);
  assertError(t, await estimateMax(f), 409, 'conflict', { reason: 'insufficient_funds', available: '0' });
  // Less than the reserved network fee.
  await f.fund('0.00002');
  assertError(t, await estimateMax(f), 409, 'conflict', { reason: 'insufficient_funds', available: '0.00002' });
  for (const amount of ['MAX', 'max ', 'maximum', 'all']) assertError(t, await estimateMax(f, { amount }), 400, 'validation_error', { field: 'amount' });
  assertError(t, await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: 'max', to_address: PAY_TO }), 400, 'validation_error', { field: 'amount' });
  assertError(t, await estimateMax(f, { coin_id: 'not-a-coin' }), 400, 'validation_error', { field: 'coin_id' });
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
  t.deepEqual(await f.balance(), { available: '0.00002', hold: '0' });
});

test('without a network fee estimate, amount "max" is 503 unavailable and nothing is held', async (t) => {
  const f = await fixture(t, '1');
  f.bitcoin.quoteFails = true;
  const res = await estimateMax(f);
  t.is(res.status, 503, JSON.stringify(res.body));
  t.is(res.body.error.code, 'unavailable');
  t.deepEqual(res.body.error.details, {});
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
});
