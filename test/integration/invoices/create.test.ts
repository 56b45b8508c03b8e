import test from 'ava';
import { merchantWithKey } from '../../helpers/daemon';
import { ApiClient, COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

let f: InvoiceFixture;
test.before(async () => {
  f = await startInvoiceFixture();
});
test.after.always(async () => {
  await f?.stop();
});

const INVOICE_FIELDS = [
  'id',
  'status',
  'currency',
  'amount',
  'coin_id',
  'ticker',
  'network',
  'address',
  'amount_crypto',
  'payer_amount',
  'paid_amount',
  'remaining_amount',
  'overpaid_amount',
  'refunded_amount',
  'resolution',
  'amount_fiat',
  'fiat_currency',
  'rate_locked',
  'rate_locked_at',
  'late_payment',
  'fee_paid_by',
  'order_id',
  'description',
  'return_url',
  'webhook_url',
  'metadata',
  'allowed_coin_ids',
  'checkout_url',
  'ttl_expires_at',
  'expired_at',
  'created_at',
  'updated_at',
];

test.serial('a fiat invoice with coin_id fixes the coin now: address, locked rate, amount_crypto rounded up, payer_amount', async (t) => {
  const res = await f.api.post('/v1/invoices', { amount: '100', currency: 'USD', coin_id: COINS.BTC, order_id: 'o-1', description: 'Mug' });
  t.is(res.status, 201);
  const inv = res.body;
  t.deepEqual(Object.keys(inv).sort(), [...INVOICE_FIELDS].sort());
  t.like(inv, {
    status: 'new',
    currency: 'USD',
    amount: '100',
    coin_id: COINS.BTC,
    ticker: 'BTC',
    network: 'bitcoin',
    // 100 / 68000 = 0.00147058823..., rounded up to 8 decimals.
    amount_crypto: '0.00147059',
    payer_amount: '0.00147059',
    paid_amount: '0',
    remaining_amount: '0.00147059',
    overpaid_amount: '0',
    refunded_amount: '0',
    resolution: null,
    amount_fiat: '100',
    fiat_currency: 'USD',
    rate_locked: '68000',
    late_payment: false,
    fee_paid_by: 'merchant',
    order_id: 'o-1',
    description: 'Mug',
    return_url: null,
    webhook_url: null,
    metadata: null,
    allowed_coin_ids: null,
    expired_at: null,
  });
  t.is(typeof inv.address, 'string');
  t.is(inv.checkout_url, `http://127.0.0.1:8420/pay/${inv.id}`);
  t.is(Date.parse(inv.ttl_expires_at) - Date.parse(inv.created_at), 30 * 60_000);
  t.is(inv.rate_locked_at, inv.created_at);
  t.deepEqual((await f.api.get(`/v1/invoices/${inv.id}`)).body, inv);
});

test.serial('without coin_id the coin stays open: coin fields null, allowed_coin_ids kept and filtered to the currency', async (t) => {
  const res = await f.api.post('/v1/invoices', {
    amount: '25',
    currency: 'USDT',
    allowed_coin_ids: [COINS.USDT_ETH, COINS.BTC, COINS.USDT_TRON, COINS.USDT_ETH],
    metadata: { cart: '42', customer: 'c-9' },
    return_url: 'https://shop.example/thanks',
    webhook_url: 'http://127.0.0.1:9999/hook',
  });
  t.is(res.status, 201);
  t.like(res.body, {
    coin_id: null,
    ticker: null,
    network: null,
    address: null,
    amount_crypto: null,
    payer_amount: null,
    rate_locked: null,
    rate_locked_at: null,
    allowed_coin_ids: [COINS.USDT_ETH, COINS.USDT_TRON],
    metadata: { cart: '42', customer: 'c-9' },
    return_url: 'https://shop.example/thanks',
    webhook_url: 'http://127.0.0.1:9999/hook',
  });
});

test.serial('a coin-priced invoice: amount_crypto is the amount, with its informative value in the default fiat', async (t) => {
  const res = await f.api.post('/v1/invoices', { amount: '0.5', currency: 'ETH', coin_id: COINS.ETH });
  t.is(res.status, 201);
  t.like(res.body, { amount_crypto: '0.5', payer_amount: '0.5', amount_fiat: '1700', fiat_currency: 'USD', rate_locked: '3400' });
});

test.serial('a coin-priced token invoice needs no rate', async (t) => {
  const res = await f.api.post('/v1/invoices', { amount: '10.123456', currency: 'USDT', coin_id: COINS.USDT_TRON });
  t.is(res.status, 201);
  t.like(res.body, { amount_crypto: '10.123456', network: 'tron', amount_fiat: null, rate_locked: null });
});

const bad: Array<[string, Record<string, unknown>, string]> = [
  ['amount missing', { currency: 'USD' }, 'amount'],
  ['amount as a number', { amount: 10, currency: 'USD' }, 'amount'],
  ['amount in exponent notation', { amount: '1e2', currency: 'USD' }, 'amount'],
  ['amount zero', { amount: '0', currency: 'USD' }, 'amount'],
  ['amount negative', { amount: '-5', currency: 'USD' }, 'amount'],
  ['more decimals than USD has', { amount: '1.001', currency: 'USD' }, 'amount'],
  ['decimals on JPY', { amount: '100.5', currency: 'JPY' }, 'amount'],
  ['more decimals than the coin has', { amount: '0.123456789', currency: 'BTC', coin_id: COINS.BTC }, 'amount'],
  ['more than 18 decimals', { amount: '0.0000000000000000001', currency: 'ETH' }, 'amount'],
  ['currency missing', { amount: '1' }, 'currency'],
  ['an unknown currency', { amount: '1', currency: 'XYZ' }, 'currency'],
  ['a fiat that is not enabled', { amount: '1', currency: 'GBP' }, 'currency'],
  ['coin_id not a uuid', { amount: '1', currency: 'USD', coin_id: 'btc' }, 'coin_id'],
  ['coin_id unknown', { amount: '1', currency: 'USD', coin_id: '00000000-0000-4000-8000-000000000000' }, 'coin_id'],
  ['coin_id of another ticker', { amount: '1', currency: 'ETH', coin_id: COINS.BTC }, 'coin_id'],
  ['coin_id not offered for invoices', { amount: '1', currency: 'DAI', coin_id: COINS.DAI }, 'coin_id'],
  ['coin_id outside allowed_coin_ids', { amount: '1', currency: 'USD', coin_id: COINS.BTC, allowed_coin_ids: [COINS.ETH] }, 'coin_id'],
  ['allowed_coin_ids empty', { amount: '1', currency: 'USD', allowed_coin_ids: [] }, 'allowed_coin_ids'],
  ['allowed_coin_ids not an array', { amount: '1', currency: 'USD', allowed_coin_ids: COINS.BTC }, 'allowed_coin_ids'],
  ['allowed_coin_ids with a non-uuid', { amount: '1', currency: 'USD', allowed_coin_ids: ['btc'] }, 'allowed_coin_ids'],
  ['allowed_coin_ids with an unknown coin', { amount: '1', currency: 'USD', allowed_coin_ids: ['00000000-0000-4000-8000-000000000000'] }, 'allowed_coin_ids'],
  ['metadata not an object', { amount: '1', currency: 'USD', metadata: ['a'] }, 'metadata'],
  ['metadata with a number value', { amount: '1', currency: 'USD', metadata: { n: 1 } }, 'metadata'],
  ['metadata with 21 pairs', { amount: '1', currency: 'USD', metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
  ['metadata over 4 KB', { amount: '1', currency: 'USD', metadata: { big: 'x'.repeat(4100) } }, 'metadata'],
  ['fee_paid_by unknown', { amount: '1', currency: 'USD', fee_paid_by: 'nobody' }, 'fee_paid_by'],
  ['order_id too long', { amount: '1', currency: 'USD', order_id: 'o'.repeat(129) }, 'order_id'],
  ['order_id not a string', { amount: '1', currency: 'USD', order_id: 5 }, 'order_id'],
  ['idempotency_by_order_id not a boolean', { amount: '1', currency: 'USD', order_id: 'x', idempotency_by_order_id: 'yes' }, 'idempotency_by_order_id'],
  ['idempotency_by_order_id without order_id', { amount: '1', currency: 'USD', idempotency_by_order_id: true }, 'order_id'],
  ['description not a string', { amount: '1', currency: 'USD', description: {} }, 'description'],
  ['return_url not a URL', { amount: '1', currency: 'USD', return_url: 'not a url' }, 'return_url'],
  ['return_url of another scheme', { amount: '1', currency: 'USD', return_url: 'javascript:alert(1)' }, 'return_url'],
  ['webhook_url not a URL', { amount: '1', currency: 'USD', webhook_url: 'nope' }, 'webhook_url'],
  ['webhook_url of another scheme', { amount: '1', currency: 'USD', webhook_url: 'ftp://example.com/x' }, 'webhook_url'],
  ['an unknown field', { amount: '1', currency: 'USD', colour: 'red' }, 'colour'],
  // An object would drop the key silently; JSON.parse keeps it as the client sent it.
  ['a metadata key __proto__', JSON.parse('{"amount":"1","currency":"USD","metadata":{"__proto__":"x","cart":"42"}}'), 'metadata.__proto__'],
  ['a right-to-left override in order_id', { amount: '1', currency: 'USD', order_id: 'order-\u202E1000' }, 'order_id'],
  ['a first-strong isolate in description', { amount: '1', currency: 'USD', description: 'pay \u2066100\u2069 USD' }, 'description'],
  ['a right-to-left mark in a metadata value', { amount: '1', currency: 'USD', metadata: { note: 'a\u200Fb' } }, 'metadata.note'],
  ['a left-to-right embedding in a metadata key', { amount: '1', currency: 'USD', metadata: { 'k\u202Ay': 'v' } }, 'metadata'],
];

for (const [what, body, field] of bad) {
  test.serial(`POST /v1/invoices with ${what} is 400 validation_error on ${field} and writes nothing`, async (t) => {
    const before = await f.counts();
    const res = await f.api.post('/v1/invoices', body);
    t.is(res.status, 400);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, field);
    t.deepEqual(await f.counts(), before);
  });
}

test.serial('a body that is not JSON is 400 validation_error and writes nothing', async (t) => {
  const before = await f.counts();
  const res = await f.api.post('/v1/invoices', '{"amount":', { 'Content-Type': 'application/json' });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'validation_error');
  t.deepEqual(await f.counts(), before);
});

test.serial('no allowed coin left after filtering is 422 no_allowed_coins and writes nothing', async (t) => {
  const before = await f.counts();
  for (const body of [
    { amount: '1', currency: 'USDT', allowed_coin_ids: [COINS.BTC, COINS.ETH] },
    { amount: '1', currency: 'USD', allowed_coin_ids: [COINS.DAI] },
    { amount: '1', currency: 'DAI' },
  ]) {
    const res = await f.api.post('/v1/invoices', body);
    t.is(res.status, 422, JSON.stringify(body));
    t.is(res.body.error.code, 'no_allowed_coins');
  }
  t.deepEqual(await f.counts(), before);
});

test.serial('fiat pricing without a current rate is 503 unavailable and writes nothing', async (t) => {
  const before = await f.counts();
  // The test rates price BTC and ETH only.
  const res = await f.api.post('/v1/invoices', { amount: '10', currency: 'USD', coin_id: COINS.USDT_ETH }, { 'Idempotency-Key': 'rate-1' });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'unavailable');
  t.deepEqual(await f.counts(), before);
  // The key was released (SPEC idempotency rule 6): a corrected retry runs.
  const retry = await f.api.post('/v1/invoices', { amount: '10', currency: 'USDT', coin_id: COINS.USDT_ETH }, { 'Idempotency-Key': 'rate-1' });
  t.is(retry.status, 201);
});

test.serial('a coin in maintenance is 503 unavailable and writes nothing', async (t) => {
  const catalog = f.td.daemon.catalog;
  catalog.setMaintenance(COINS.ETH, true);
  t.teardown(() => catalog.setMaintenance(COINS.ETH, false));
  const before = await f.counts();
  const res = await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: COINS.ETH });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'unavailable');
  const filtered = await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', allowed_coin_ids: [COINS.ETH] });
  t.is(filtered.status, 422);
  t.is(filtered.body.error.code, 'no_allowed_coins');
  t.deepEqual(await f.counts(), before);
});

test.serial('idempotency_by_order_id: a repeat returns the open invoice with 200 and creates nothing', async (t) => {
  const body = { amount: '10.50', currency: 'USD', coin_id: COINS.ETH, order_id: 'order-77', idempotency_by_order_id: true };
  const first = await f.api.post('/v1/invoices', body);
  t.is(first.status, 201);
  const before = await f.counts();
  const again = await f.api.post('/v1/invoices', { ...body, amount: '10.5' });
  t.is(again.status, 200);
  t.deepEqual(again.body, first.body);
  t.deepEqual(await f.counts(), before);
});

test.serial('idempotency_by_order_id: another amount is 409 conflict order_invoice_mismatch with invoice_id', async (t) => {
  const body = { amount: '5', currency: 'USD', order_id: 'order-78', idempotency_by_order_id: true };
  const first = await f.api.post('/v1/invoices', body);
  t.is(first.status, 201);
  const before = await f.counts();
  const res = await f.api.post('/v1/invoices', { ...body, amount: '6' });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'conflict');
  t.deepEqual(res.body.error.details, { reason: 'order_invoice_mismatch', invoice_id: first.body.id });
  t.deepEqual(await f.counts(), before);
});

test.serial('idempotency_by_order_id: an order that received funds is 409 conflict order_has_payment with invoice_id', async (t) => {
  const body = { amount: '0.1', currency: 'ETH', coin_id: COINS.ETH, order_id: 'order-79', idempotency_by_order_id: true };
  const first = await f.api.post('/v1/invoices', body);
  await f.chain('ethereum').send(first.body.address, COINS.ETH, '0.1');
  const before = await f.counts();
  const res = await f.api.post('/v1/invoices', body);
  t.is(res.status, 409);
  t.is(res.body.error.code, 'conflict');
  t.deepEqual(res.body.error.details, { reason: 'order_has_payment', invoice_id: first.body.id });
  t.deepEqual(await f.counts(), before);
});

test.serial('without idempotency_by_order_id the same order_id makes a second invoice', async (t) => {
  const body = { amount: '5', currency: 'USD', order_id: 'order-80' };
  const a = await f.api.post('/v1/invoices', body);
  const b = await f.api.post('/v1/invoices', body);
  t.is(a.status, 201);
  t.is(b.status, 201);
  t.not(a.body.id, b.body.id);
});

test.serial('an Idempotency-Key repeat replays the invoice and creates nothing twice', async (t) => {
  const body = { amount: '3', currency: 'USD', coin_id: COINS.BTC };
  const first = await f.api.post('/v1/invoices', body, { 'Idempotency-Key': 'inv-key-1' });
  t.is(first.status, 201);
  const before = await f.counts();
  const again = await f.api.post('/v1/invoices', body, { 'Idempotency-Key': 'inv-key-1' });
  t.is(again.status, 201);
  t.is(again.headers.get('Idempotent-Replayed'), 'true');
  t.deepEqual(again.body, first.body);
  t.deepEqual(await f.counts(), before);
});

test.serial('a key without create_invoice is 403 auth.permission_denied and writes nothing', async (t) => {
  const m = await merchantWithKey(f.td.daemon, { permissions: ['read'] });
  const reader = new ApiClient(f.td.url, m.keyId, m.secret);
  const before = await f.counts();
  const res = await reader.post('/v1/invoices', { amount: '1', currency: 'USD' });
  t.is(res.status, 403);
  t.is(res.body.error.code, 'auth.permission_denied');
  t.is(res.body.error.details.required, 'create_invoice');
  t.deepEqual(await f.counts(), before);
});
