import test from 'ava';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { StaticAddressEntity } from '../../../src/db/entities/static-address';
import { AccountEntity, SecurityLogEntity } from '../../../src/db/entities/team';
import { WithdrawalEntity, WithdrawalKeyEntity } from '../../../src/db/entities/withdrawals';
import { merchantWithKey, OtpSource } from '../../helpers/daemon';
import { ApiClient, COINS, type ApiResponse } from '../../helpers/invoice-fixture';
import { recordTransaction } from '../../helpers/money-fixtures';
import { signedGet } from '../../helpers/signed-get';
import { parseCsv } from '../../helpers/csv';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

/**
 * Two merchants on one daemon: B holds every permission and tries each route with A's ids, filters
 * and idempotency names. Every answer must be 404 not_found or an empty list, and A's rows stay
 * exactly as they were.
 */
interface Two {
  f: WithdrawalFixture;
  /** A's key with every permission. */
  a: ApiClient;
  /** B's key with every permission. */
  b: ApiClient;
  bAccountId: string;
}

async function twoMerchants(): Promise<Two> {
  const f = await startWithdrawalFixture();
  await f.fund('1');
  const a = await f.key(['read', 'withdraw', 'create_invoice', 'create_address']);
  const store = f.td.daemon.store;
  const m = await merchantWithKey(f.td.daemon, { permissions: ['read'] });
  const otp = new OtpSource(m.ownerTotp, { now: () => new Date() });
  const { key } = await f.td.daemon.keys.create(
    m.accountId,
    { email: m.owner, otp: otp.next() },
    {
      name: 'b-all',
      permissions: ['read', 'withdraw', 'create_invoice', 'create_address'],
      ip_whitelist: [],
      rate_limit_per_minute: 6000,
      test: false,
    },
  );
  const dayAgo = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
  await store.write(async (em) => {
    await em.update(SecurityLogEntity, { account_id: m.accountId }, { created_at: dayAgo });
    await em.update(AccountEntity, { id: m.accountId }, { verified: true });
  });
  f.td.daemon.team.changedOutside();
  await recordTransaction(store, { accountId: m.accountId, coinId: COINS.BTC, type: 'deposit', amount: '1' });
  return { f, a, b: new ApiClient(f.td.url, key.key_id, key.secret), bAccountId: m.accountId };
}

/** Everything of account A a request of B could change. */
async function rowsOf(f: WithdrawalFixture) {
  const read = f.td.daemon.store.read;
  const where = { account_id: f.accountId };
  return {
    withdrawals: await read.find(WithdrawalEntity, { where, order: { id: 'ASC' } }),
    withdrawalKeys: await read.find(WithdrawalKeyEntity, { where, order: { key: 'ASC' } }),
    addresses: await read.find(StaticAddressEntity, { where, order: { id: 'ASC' } }),
    invoices: await read.find(InvoiceEntity, { where, order: { id: 'ASC' } }),
    balance: await f.balance(),
  };
}

const notFound = (res: ApiResponse, what: string) => ({ status: res.status, code: res.body?.error?.code, details: res.body?.error?.details, what });

test('a merchant reaching with its own key for every withdrawal, address and invoice id of another account gets 404 not_found and changes nothing; the pay page knows no withdrawal or address id', async (t) => {
  const { f, a, b } = await twoMerchants();
  t.teardown(() => f.stop());
  const w = await a.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'p-a' });
  t.is(w.status, 201, JSON.stringify(w.body));
  const addr = await a.post('/v1/addresses', { customer_id: 'cust-a', coin_id: COINS.BTC, label: 'A label' });
  t.is(addr.status, 201, JSON.stringify(addr.body));
  const archived = await a.post('/v1/addresses', { customer_id: 'cust-a2', coin_id: COINS.BTC });
  t.is((await a.post(`/v1/addresses/${archived.body.id}/archive`)).status, 200);
  const inv = await a.post('/v1/invoices', { amount: '5', currency: 'USD' });
  t.is(inv.status, 201, JSON.stringify(inv.body));
  const before = await rowsOf(f);

  const attempts: Array<[string, () => Promise<ApiResponse>]> = [
    ['GET withdrawal', () => b.get(`/v1/withdrawals/${w.body.id}`)],
    ['GET withdrawal, upper case id', () => b.get(`/v1/withdrawals/${w.body.id.toUpperCase()}`)],
    ['cancel withdrawal', () => b.post(`/v1/withdrawals/${w.body.id}/cancel`)],
    ['GET address', () => b.get(`/v1/addresses/${addr.body.id}`)],
    ['archive address', () => b.post(`/v1/addresses/${addr.body.id}/archive`)],
    ['restore address', () => b.post(`/v1/addresses/${archived.body.id}/restore`)],
    ['GET invoice', () => b.get(`/v1/invoices/${inv.body.id}`)],
    ['cancel invoice', () => b.post(`/v1/invoices/${inv.body.id}/cancel`)],
  ];
  for (const [what, attempt] of attempts) {
    t.deepEqual(notFound(await attempt(), what), { status: 404, code: 'not_found', details: {}, what });
  }
  // The public pay page knows invoices only: a withdrawal's or an address's id is no page.
  for (const id of [w.body.id, addr.body.id]) {
    t.is((await fetch(`${f.td.url}/pay/${id}`)).status, 404);
    const status = await fetch(`${f.td.url}/pay/${id}/status`);
    t.is(status.status, 404);
    t.is(((await status.json()) as { error: { code: string } }).error.code, 'not_found');
  }
  t.deepEqual(await rowsOf(f), before);
  // A still reaches all of it: the 404s were about the account, not the ids.
  t.is((await a.get(`/v1/withdrawals/${w.body.id}`)).status, 200);
  t.is((await a.get(`/v1/addresses/${addr.body.id}`)).status, 200);
  t.is((await a.get(`/v1/invoices/${inv.body.id}`)).status, 200);
});

test('no list filter, search or export of one merchant returns a row of another account', async (t) => {
  const { f, a, b } = await twoMerchants();
  t.teardown(() => f.stop());
  const w = await a.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'p-a' });
  const addr = await a.post('/v1/addresses', { customer_id: 'cust-a', coin_id: COINS.BTC, label: 'A label' });
  const inv = await a.post('/v1/invoices', { amount: '5', currency: 'USD', order_id: 'order-a' });
  t.is(inv.status, 201, JSON.stringify(inv.body));
  const empty = { items: [], next_cursor: null };
  const lists = [
    '/v1/withdrawals',
    `/v1/withdrawals?payout_id=p-a`,
    '/v1/withdrawals?status=pending',
    `/v1/withdrawals?coin_id=${COINS.BTC}`,
    '/v1/addresses',
    '/v1/addresses?customer_id=cust-a',
    `/v1/addresses?search=${encodeURIComponent(addr.body.address.slice(0, 10))}`,
    '/v1/addresses?search=cust-a',
    '/v1/addresses?search=A%20label',
    '/v1/addresses?status=active',
    '/v1/invoices',
    '/v1/invoices?order_id=order-a',
    '/v1/transactions',
    '/v1/transactions?type=withdrawal',
    '/v1/transactions?type=deposit',
  ];
  for (const target of lists) {
    const res = await b.get(target);
    t.is(res.status, 200, `${target}: ${JSON.stringify(res.body)}`);
    if (target === '/v1/transactions' || target === '/v1/transactions?type=deposit') {
      // B's own funding deposit is the one row it may see.
      t.is(res.body.items.length, 1, target);
      for (const id of [w.body.id, inv.body.id, addr.body.id]) t.false(JSON.stringify(res.body).includes(id), target);
    } else t.deepEqual(res.body, empty, target);
  }
  for (const target of [
    '/v1/withdrawals?format=csv',
    '/v1/withdrawals?format=csv&payout_id=p-a',
    '/v1/addresses?format=csv&customer_id=cust-a',
    '/v1/invoices?format=csv',
  ]) {
    const csv = await signedGet(f.td.url, { keyId: b.keyId, secret: b.secret }, target);
    t.is(csv.status, 200, target);
    const text = csv.bytes.toString('utf8');
    t.is(parseCsv(text).length, 1, `${target}: only the header\n${text}`);
  }
  // A's own key sees them: the filters are right, only the account differs.
  t.is((await a.get('/v1/withdrawals?payout_id=p-a')).body.items.length, 1);
  t.is((await a.get('/v1/addresses?customer_id=cust-a')).body.items.length, 1);
});

test('payout_id and Idempotency-Key are names of one merchant: another account reusing them gets a withdrawal of its own, never the first one or a conflict', async (t) => {
  const { f, a, b, bAccountId } = await twoMerchants();
  t.teardown(() => f.stop());
  const first = await a.post(
    '/v1/withdrawals',
    { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'shared' },
    { 'Idempotency-Key': 'shared-key' },
  );
  t.is(first.status, 201, JSON.stringify(first.body));
  const before = await rowsOf(f);
  // Other values under the same names: for A this would be 422 or 409; for B it is a new payout.
  const other = await b.post(
    '/v1/withdrawals',
    { coin_id: COINS.BTC, amount: '0.2', to_address: PAY_TO, payout_id: 'shared' },
    { 'Idempotency-Key': 'shared-key' },
  );
  t.is(other.status, 201, JSON.stringify(other.body));
  t.not(other.body.id, first.body.id);
  t.is(other.body.amount, '0.2');
  // The same values as A's under the same names: still B's own payout, created once.
  const second = await b.post(
    '/v1/withdrawals',
    { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'shared-2' },
    { 'Idempotency-Key': 'shared-key-2' },
  );
  t.is(second.status, 201);
  const sameAsA = await b.post(
    '/v1/withdrawals',
    { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'shared-2' },
    { 'Idempotency-Key': 'shared-key-2' },
  );
  t.is(sameAsA.status, 200);
  t.is(sameAsA.body.id, second.body.id);
  const read = f.td.daemon.store.read;
  t.is(await read.countBy(WithdrawalEntity, { account_id: bAccountId }), 2);
  t.is((await read.findOneByOrFail(WithdrawalKeyEntity, { account_id: bAccountId, key: 'shared-key' })).withdrawal_id, other.body.id);
  t.deepEqual(await rowsOf(f), before);
  // And A's names still answer A's payout.
  const again = await a.post(
    '/v1/withdrawals',
    { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, payout_id: 'shared' },
    { 'Idempotency-Key': 'shared-key' },
  );
  t.is(again.status, 200);
  t.is(again.body.id, first.body.id);
});

test('Idempotency-Keys of addresses and invoices used by one merchant are free for another, whose repeat replays its own object', async (t) => {
  const { f, a, b } = await twoMerchants();
  t.teardown(() => f.stop());
  const addrA = await a.post('/v1/addresses', { customer_id: 'c', coin_id: COINS.BTC }, { 'Idempotency-Key': 'same' });
  const invA = await a.post('/v1/invoices', { amount: '5', currency: 'USD' }, { 'Idempotency-Key': 'same-inv' });
  t.is(addrA.status, 201);
  t.is(invA.status, 201);
  const before = await rowsOf(f);
  const addrB = await b.post('/v1/addresses', { customer_id: 'c', coin_id: COINS.BTC }, { 'Idempotency-Key': 'same' });
  t.is(addrB.status, 201, JSON.stringify(addrB.body));
  t.not(addrB.body.id, addrA.body.id);
  t.not(addrB.body.address, addrA.body.address);
  const invB = await b.post('/v1/invoices', { amount: '7', currency: 'USD' }, { 'Idempotency-Key': 'same-inv' });
  t.is(invB.status, 201, JSON.stringify(invB.body));
  t.not(invB.body.id, invA.body.id);
  t.deepEqual(await rowsOf(f), before);
});

test("one merchant setting its embed origins does not change which origins may frame another merchant's page", async (t) => {
  const { f, a, b } = await twoMerchants();
  t.teardown(() => f.stop());
  t.is((await a.call('PUT', '/v1/embed', { allowed_origins: ['https://a.example'] })).status, 200);
  t.is((await b.call('PUT', '/v1/embed', { allowed_origins: ['https://b.example'] })).status, 200);
  t.deepEqual((await a.get('/v1/embed')).body, { allowed_origins: ['https://a.example'] });
  t.deepEqual((await b.get('/v1/embed')).body, { allowed_origins: ['https://b.example'] });
  const inv = await a.post('/v1/invoices', { amount: '5', currency: 'USD' });
  const page = await fetch(`${f.td.url}/pay/${inv.body.id}`);
  t.regex(page.headers.get('content-security-policy')!, /frame-ancestors https:\/\/a\.example(;|$)/);
});
