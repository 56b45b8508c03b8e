import test, { type ExecutionContext } from 'ava';
import { verifyLedger } from '../../../src/ledger/verify';
import { WithdrawalEntity, WithdrawalKeyEntity } from '../../../src/db/entities/withdrawals';
import { parseCsv } from '../../helpers/csv';
import { signedGet } from '../../helpers/signed-get';
import { ApiClient, COINS, type ApiResponse } from '../../helpers/invoice-fixture';
import { PAY_TO, RESERVED_FEE, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

const body = (over: Record<string, unknown> = {}) => ({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, ...over });

async function fixture(t: ExecutionContext, funds = '1'): Promise<WithdrawalFixture> {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund(funds);
  return f;
}

function assertError(t: ExecutionContext, res: ApiResponse, status: number, code: string, details?: Record<string, unknown>) {
  t.is(res.status, status, JSON.stringify(res.body));
  t.is(res.body.error.code, code);
  if (details) t.like(res.body.error.details, details);
}

test('an estimate, then a withdrawal: total_debit leaves available for hold, and GET, the list and the ledger agree', async (t) => {
  const f = await fixture(t);
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1' });
  t.is(est.status, 200, JSON.stringify(est.body));
  t.like(est.body, {
    coin_id: COINS.BTC,
    amount: '0.1',
    platform_fee: '0',
    network_fee_reserved: RESERVED_FEE,
    network_fee_mode: 'reserved',
    total_debit: '0.100025',
  });

  const res = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-1', comment: 'rent' }));
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, {
    status: 'pending',
    payout_id: 'p-1',
    coin_id: COINS.BTC,
    ticker: 'BTC',
    network: 'bitcoin',
    amount: '0.1',
    to_address: PAY_TO,
    comment: 'rent',
    review_reason: null,
    txid: null,
    confirmations: 0,
    platform_fee: '0',
    network_fee_reserved: RESERVED_FEE,
    network_fee_charged: null,
    network_fee_mode: 'reserved',
    total_debit: '0.100025',
    completed_at: null,
  });
  t.deepEqual(await f.balance(), { available: '0.899975', hold: '0.100025' });
  t.deepEqual((await f.api.get(`/v1/withdrawals/${res.body.id}`)).body, res.body);
  const list = await f.api.get('/v1/withdrawals?status=pending&payout_id=p-1');
  t.deepEqual(list.body.items, [res.body]);
  t.deepEqual((await f.api.get('/v1/withdrawals?status=cancelled')).body.items, []);
  const csv = await signedGet(f.td.url, { keyId: f.api.keyId, secret: f.api.secret }, '/v1/withdrawals?format=csv');
  t.is(csv.status, 200);
  const [header, row] = parseCsv(csv.bytes.toString('utf8'));
  t.is(row![header!.indexOf('id')], res.body.id);
  t.is(row![header!.indexOf('total_debit')], '0.100025');
  const tx = await f.api.get(`/v1/transactions?type=withdrawal`);
  t.like(tx.body.items[0], { type: 'withdrawal', status: 'pending', amount: '0.1', withdrawal_id: res.body.id });
  t.true((await f.td.daemon.store.snapshot((em) => verifyLedger(em))).ok);
});

test('the platform fee is charged in the withdrawn coin on top of the amount, rounded up', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ platform_fee_percent: '1.5' });
  const res = await f.api.post('/v1/withdrawals', body({ amount: '0.12345679' }));
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { platform_fee: '0.00185186', total_debit: '0.12533365' });
});

test('every refusal of POST /v1/withdrawals creates nothing and holds nothing', async (t) => {
  const f = await fixture(t, '0.5');
  const nothing = async (what: string) => {
    t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 }, what);
    t.deepEqual(await f.balance(), { available: '0.5', hold: '0' }, what);
  };
  const readOnly = await f.key(['read']);
  assertError(t, await readOnly.post('/v1/withdrawals', body()), 403, 'auth.permission_denied', { required: 'withdraw' });
  await nothing('no withdraw');

  for (const [amount, why] of [
    ['0.000000001', 'more decimals than the coin'],
    ['0', 'zero'],
    ['-1', 'negative'],
    ['0.00000545', 'under the dust limit'],
    [0.1, 'a number'],
  ] as const) {
    assertError(t, await f.api.post('/v1/withdrawals', body({ amount })), 400, 'validation_error', { field: 'amount' });
    await nothing(why);
  }
  for (const to of [
    'not-an-address',
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt081',
    'bcrt1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq',
  ]) {
    assertError(t, await f.api.post('/v1/withdrawals', body({ to_address: to })), 422, 'address_refused');
    t.deepEqual(await f.api.post('/v1/withdrawals', body({ to_address: to })).then((r) => r.body.error.details), {}, 'no detail');
    await nothing(to);
  }
  // One of the wallet's own addresses: an invoice's deposit address.
  const invoiceKey = await f.key(['read', 'create_invoice']);
  const inv = await invoiceKey.post('/v1/invoices', { currency: 'BTC', coin_id: COINS.BTC, amount: '0.01' });
  t.is(inv.status, 201, JSON.stringify(inv.body));
  assertError(t, await f.api.post('/v1/withdrawals', body({ to_address: inv.body.address })), 422, 'address_refused');
  await nothing('own address');

  assertError(t, await f.api.post('/v1/withdrawals', body({ coin_id: COINS.ETH })), 400, 'validation_error', { field: 'coin_id' });
  assertError(t, await f.api.post('/v1/withdrawals', body({ amount: '0.5' })), 409, 'conflict', { reason: 'insufficient_funds' });
  await nothing('insufficient funds');

  await f.setAccount({ withdrawal_whitelist_enforced: true });
  assertError(t, await f.api.post('/v1/withdrawals', body()), 403, 'forbidden');
  await nothing('not whitelisted');
  await f.td.daemon.withdrawals.whitelist.add(f.accountId, { kind: 'member', email: f.owner, otp: f.ownerOtp.next() }, { coin_id: COINS.BTC, address: PAY_TO });
  await f.setAccount({ withdrawal_whitelist_enforced: false });

  await f.setAccount({ verified: false });
  assertError(t, await f.api.post('/v1/withdrawals', body()), 403, 'kyb_required');
  await nothing('not verified');
  await f.setAccount({ verified: true });
  await f.td.daemon.team.freeze(f.accountId, { kind: 'member', email: f.owner });
  assertError(t, await f.api.post('/v1/withdrawals', body()), 403, 'account_frozen');
  // The balances read is refused too while frozen: the rows say nothing was made.
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
});

test('a payout while the withdraw request waits is 403 withdraw_pending_approval, and its Idempotency-Key stays free', async (t) => {
  const f = await fixture(t);
  await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'dev@example.com', 'developer');
  const { key } = await f.td.daemon.keys.create(f.accountId, { email: 'dev@example.com' }, { name: 'dev', permissions: ['read', 'withdraw'] });
  t.is(key.withdraw_status, 'pending');
  const dev = new ApiClient(f.td.url, key.key_id, key.secret);
  assertError(t, await dev.post('/v1/withdrawals', body(), { 'Idempotency-Key': 'k-pending' }), 403, 'withdraw_pending_approval');
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
  const ok = await f.api.post('/v1/withdrawals', body(), { 'Idempotency-Key': 'k-pending' });
  t.is(ok.status, 201, JSON.stringify(ok.body));
});

test('Idempotency-Keys of withdrawals: the same values return the same withdrawal, other values are 422, the key decides before payout_id', async (t) => {
  const f = await fixture(t);
  const first = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-a' }), { 'Idempotency-Key': 'key-a' });
  t.is(first.status, 201);
  // Values, not bytes; and any key of the merchant.
  const other = await f.key(['read', 'withdraw']);
  const again = await other.post('/v1/withdrawals', body({ payout_id: 'p-a', amount: '0.10' }), { 'Idempotency-Key': 'key-a' });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.body.id, first.body.id);
  for (const change of [{ amount: '0.2' }, { comment: 'x' }, { payout_id: 'p-b' }, { to_address: 'mgA7SfyBBrVGVSpQ7oqGHPhxpp2gUZWtfc' }]) {
    assertError(t, await f.api.post('/v1/withdrawals', body({ payout_id: 'p-a', ...change }), { 'Idempotency-Key': 'key-a' }), 422, 'idempotency.mismatch');
  }
  // A second withdrawal; then key-a names p-b's values: the key decides, 422 although p-b exists.
  const second = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-b', amount: '0.2' }));
  t.is(second.status, 201);
  assertError(t, await f.api.post('/v1/withdrawals', body({ payout_id: 'p-b', amount: '0.2' }), { 'Idempotency-Key': 'key-a' }), 422, 'idempotency.mismatch');
  // A new key on p-b's repeat returns p-b and binds the key to it.
  const bound = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-b', amount: '0.2' }), { 'Idempotency-Key': 'key-b' });
  t.is(bound.status, 200);
  t.is(bound.body.id, second.body.id);
  t.is((await f.td.daemon.store.read.findOneByOrFail(WithdrawalKeyEntity, { account_id: f.accountId, key: 'key-b' })).withdrawal_id, second.body.id);
  // payout_id with other parameters: 409.
  assertError(t, await f.api.post('/v1/withdrawals', body({ payout_id: 'p-b', amount: '0.3' })), 409, 'conflict');
  t.deepEqual(await f.counts(), { withdrawals: 2, holds: 2 });
});

test('a withdrawal repeated with the same Idempotency-Key returns it with Idempotent-Replayed: true; a first creation and a payout_id repeat under a new key do not say so', async (t) => {
  const f = await fixture(t);
  const first = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-r' }), { 'Idempotency-Key': 'key-r' });
  t.is(first.status, 201);
  t.is(first.headers.get('idempotent-replayed'), null);
  const again = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-r' }), { 'Idempotency-Key': 'key-r' });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  // Not a replay: the payout_id finds it, and the new key is bound to it (SPEC Idempotency 10).
  const bound = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-r' }), { 'Idempotency-Key': 'key-s' });
  t.is(bound.status, 200);
  t.is(bound.headers.get('idempotent-replayed'), null);
  t.deepEqual(await f.counts(), { withdrawals: 1, holds: 1 });
});

test('an estimate repeated with the same Idempotency-Key replays its first answer with Idempotent-Replayed: true', async (t) => {
  const f = await fixture(t);
  const first = await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1' }, { 'Idempotency-Key': 'est-1' });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.headers.get('idempotent-replayed'), null);
  f.bitcoin.satPerVbyte = 40;
  const again = await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1' }, { 'Idempotency-Key': 'est-1' });
  t.is(again.status, 200);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body, 'the first answer, not a new estimate');
  assertError(
    t,
    await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.2' }, { 'Idempotency-Key': 'est-1' }),
    422,
    'idempotency.mismatch',
  );
});

for (const mode of ['the same Idempotency-Key', 'the same payout_id under different keys'] as const) {
  test(`50 parallel copies of one withdrawal with ${mode}: one withdrawal, one hold, the same id everywhere, never insufficient_funds`, async (t) => {
    // Room for one withdrawal only: a second hold would be refused.
    const f = await fixture(t, '0.15');
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        f.api.post('/v1/withdrawals', body({ payout_id: 'p-par' }), { 'Idempotency-Key': mode === 'the same Idempotency-Key' ? 'par' : `par-${i}` }),
      ),
    );
    for (const a of answers) t.true(a.status === 201 || a.status === 200, JSON.stringify(a.body));
    t.is(new Set(answers.map((a) => a.body.id)).size, 1);
    t.is(answers.filter((a) => a.status === 201).length, 1);
    t.deepEqual(await f.counts(), { withdrawals: 1, holds: 1 });
    t.deepEqual(await f.balance(), { available: '0.049975', hold: '0.100025' });
  });
}

test('a payout_id repeated 25 hours later returns the same withdrawal', async (t) => {
  const f = await fixture(t);
  const first = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-old' }), { 'Idempotency-Key': 'old' });
  const dayAgo = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
  await f.td.daemon.store.write((em) => em.update(WithdrawalEntity, { id: first.body.id }, { created_at: dayAgo, updated_at: dayAgo }));
  for (const key of ['old', 'fresh']) {
    const again = await f.api.post('/v1/withdrawals', body({ payout_id: 'p-old' }), { 'Idempotency-Key': key });
    t.is(again.status, 200, JSON.stringify(again.body));
    t.is(again.body.id, first.body.id);
  }
  t.deepEqual(await f.counts(), { withdrawals: 1, holds: 1 });
});

test('cancel before processing releases the hold and sends withdrawal.cancelled; cancelled again is 409', async (t) => {
  const f = await fixture(t);
  const w = await f.api.post('/v1/withdrawals', body());
  const c = await f.api.post(`/v1/withdrawals/${w.body.id}/cancel`);
  t.is(c.status, 200, JSON.stringify(c.body));
  t.is(c.body.status, 'cancelled');
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
  assertError(t, await f.api.post(`/v1/withdrawals/${w.body.id}/cancel`), 409, 'conflict', { status: 'cancelled' });
  const events = await f.td.daemon.store.read.query(`SELECT type, body FROM events WHERE object_id = '${w.body.id}'`);
  t.deepEqual(
    events.map((e: { type: string }) => e.type),
    ['withdrawal.cancelled'],
  );
  t.deepEqual(JSON.parse(events[0].body).data.withdrawal, c.body);
  t.true((await f.td.daemon.store.snapshot((em) => verifyLedger(em))).ok);
});

test('without a network fee estimate the answer is 503 unavailable, nothing is held, and the Idempotency-Key stays free', async (t) => {
  const f = await fixture(t);
  f.bitcoin.quoteFails = true;
  assertError(t, await f.api.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1' }), 503, 'unavailable');
  assertError(t, await f.api.post('/v1/withdrawals', body(), { 'Idempotency-Key': 'k-503' }), 503, 'unavailable');
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
  f.bitcoin.quoteFails = false;
  t.is((await f.api.post('/v1/withdrawals', body(), { 'Idempotency-Key': 'k-503' })).status, 201);
});

test('payouts are sensitive operations: the eleventh withdrawal of a key within a minute is 429 with details.scope, and is not created', async (t) => {
  const f = await fixture(t);
  for (let i = 0; i < 10; i++) t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.001', payout_id: `lim-${i}` }))).status, 201);
  const res = await f.api.post('/v1/withdrawals', body({ amount: '0.001', payout_id: 'lim-10' }));
  assertError(t, res, 429, 'rate_limited', { scope: 'key' });
  t.deepEqual(await f.counts(), { withdrawals: 10, holds: 10 });
  // A repeat of an existing withdrawal is an answer, not a new payout: it is not refused.
  t.is((await f.api.post('/v1/withdrawals', body({ amount: '0.001', payout_id: 'lim-3' }))).status, 200);
});

test('the estimate needs read or withdraw; a key with neither is 403', async (t) => {
  const f = await fixture(t);
  const invoicesOnly = await f.key(['create_invoice']);
  assertError(t, await invoicesOnly.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1' }), 403, 'auth.permission_denied');
  const readOnly = await f.key(['read']);
  t.is((await readOnly.post('/v1/withdrawals/estimate', { coin_id: COINS.BTC, amount: '0.1' })).status, 200);
});

test('a payout signed with the previous secret is 403 auth.permission_denied (reason previous_secret) unless the owner who granted withdraw rotated their own key', async (t) => {
  const f = await fixture(t);
  await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@example.com', 'admin');
  const rotated = await f.td.daemon.keys.rotate(f.accountId, f.api.keyId, { email: 'admin@example.com' });
  assertError(t, await f.api.post('/v1/withdrawals', body()), 403, 'auth.permission_denied', { reason: 'previous_secret' });
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
  const current = new ApiClient(f.td.url, f.api.keyId, (rotated as { key: { secret: string } }).key.secret);
  t.is((await current.post('/v1/withdrawals', body())).status, 201);

  // SPEC's exception: the owner held the secret and granted withdraw, and rotates it themselves.
  const own = await f.key(['read', 'withdraw']);
  await f.td.daemon.keys.rotate(f.accountId, own.keyId, { email: f.owner });
  const res = await own.post('/v1/withdrawals', body({ amount: '0.2' }));
  t.is(res.status, 201, JSON.stringify(res.body));
});
