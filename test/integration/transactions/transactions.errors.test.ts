import test from 'ava';
import { newId } from '../../../src/shared/ids';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { send, signedGet, type ApiKey, type ApiResponse } from '../../helpers/signed-get';
import { signRequest } from '../../helpers/signer';
import { recordTransaction } from '../../helpers/money-fixtures';
import { BTC, CHAINS } from './fixtures';

/** The three read routes of this part; `{id}` is replaced by a transaction of the merchant. */
const ROUTES = ['/v1/transactions', '/v1/transactions/{id}', '/v1/balances'] as const;

const expectError = (t: import('ava').ExecutionContext, res: ApiResponse, status: number, code: string, details: Record<string, unknown>) => {
  t.is(res.status, status, `${code}: ${JSON.stringify(res.body)}`);
  t.is(res.body?.error?.code, code);
  t.deepEqual(res.body?.error?.details, details);
  t.is(typeof res.body?.error?.message, 'string');
};

async function merchant(td: TestDaemon, opts: Parameters<typeof merchantWithKey>[1] = {}) {
  const m = await merchantWithKey(td.daemon, opts);
  return { ...m, key: { keyId: m.keyId, secret: m.secret } as ApiKey };
}

for (const route of ROUTES) {
  test(`${route}: every authentication and limit error of SPEC, with status, code and details; none changes anything`, async (t) => {
    const td = await startTestDaemon(CHAINS);
    t.teardown(() => td.stop());
    const m = await merchant(td);
    const tx = await recordTransaction(td.daemon.store, { accountId: m.accountId, coinId: BTC, amount: '0.3', fee: '0.003' });
    const target = route.replace('{id}', tx.id);
    const ok = await signedGet(td.url, m.key, target);
    t.is(ok.status, 200);

    expectError(t, await signedGet(td.url, m.key, target, { headers: { 'X-API-Version': 'v2' } }), 400, 'unsupported_api_version', { supported: ['v1'] });
    for (const h of ['X-API-Key', 'X-Timestamp', 'X-Signature']) {
      expectError(t, await signedGet(td.url, m.key, target, { omit: [h] }), 401, 'auth.missing_header', { field: h });
    }
    expectError(t, await signedGet(td.url, m.key, target, { timestamp: '12.5' }), 401, 'auth.invalid_timestamp', {});
    const stale = Math.floor(Date.now() / 1000) - 301;
    const expired = await signedGet(td.url, m.key, target, { timestamp: stale });
    t.is(expired.body.error.code, 'auth.expired_timestamp');
    t.true(Math.abs(expired.body.error.details.server_time - Date.now() / 1000) < 5);
    expectError(t, await signedGet(td.url, { keyId: m.keyId, secret: 'x'.repeat(43) }, target), 401, 'auth.invalid_signature', {});

    const headers = signRequest({ ...m.key, method: 'GET', target });
    t.is((await send(td.url + target, headers)).status, 200);
    expectError(t, await send(td.url + target, headers), 401, 'auth.replay', {});

    const walled = await merchant(td, { ip: ['10.0.0.0/8'] });
    expectError(t, await signedGet(td.url, walled.key, route.replace('{id}', newId())), 403, 'auth.ip_not_allowed', { ip: '127.0.0.1' });
    const noRead = await merchant(td, { permissions: ['create_invoice'] });
    expectError(t, await signedGet(td.url, noRead.key, route.replace('{id}', newId())), 403, 'auth.permission_denied', { required: 'read' });

    const limited = await merchant(td, { rateLimit: 1 });
    const limitedTarget = route.replace('{id}', newId());
    // Both timestamps fixed here: the second request is signed for the second before the first's,
    // so it is no replay even when the clock ticks between the two.
    const first = Math.floor(Date.now() / 1000);
    t.not((await signedGet(td.url, limited.key, limitedTarget, { timestamp: first })).status, 429);
    const over = await signedGet(td.url, limited.key, limitedTarget, { timestamp: first - 1 });
    t.is(over.body.error.code, 'rate_limited');
    t.is(over.status, 429);
    t.is(over.body.error.details.scope, 'key');
    t.true(over.body.error.details.retry_after > 0);
    t.is(over.headers.get('retry-after'), String(over.body.error.details.retry_after));

    const disabled = await merchant(td);
    await td.daemon.keys.disable(disabled.accountId, disabled.keyId, { email: disabled.owner });
    expectError(t, await signedGet(td.url, disabled.key, route.replace('{id}', newId())), 401, 'auth.invalid_key', {});

    const frozen = await merchant(td);
    await td.daemon.team.freeze(frozen.accountId, { kind: 'member', email: frozen.owner });
    expectError(t, await signedGet(td.url, frozen.key, route.replace('{id}', newId())), 403, 'account_frozen', {});

    // Nothing of the above changed what the merchant reads.
    const after = await signedGet(td.url, m.key, target);
    t.deepEqual(after.body, ok.body);

    // Refused authentications from one address end in a block: then even a correct request is 429, scope ip.
    let blocked: ApiResponse | undefined;
    for (let i = 0; i < 30 && !blocked; i++) {
      const res = await signedGet(td.url, { keyId: m.keyId, secret: 'y'.repeat(43) }, target);
      if (res.status === 429) blocked = res;
    }
    t.truthy(blocked);
    const correct = await signedGet(td.url, m.key, target);
    t.is(correct.status, 429);
    t.is(correct.body.error.code, 'rate_limited');
    t.is(correct.body.error.details.scope, 'ip');
    t.true(Number(correct.headers.get('retry-after')) > 0);
  });
}

test('a test key on a mainnet environment is 401 auth.test_key on every read route, with details.docs_url', async (t) => {
  const td = await startTestDaemon({ ...CHAINS, network: 'mainnet', chains: [] });
  t.teardown(() => td.stop());
  for (const route of ROUTES) {
    const res = await signedGet(td.url, { keyId: `ck_test_${'a'.repeat(24)}`, secret: 'z'.repeat(43) }, route.replace('{id}', newId()));
    t.is(res.status, 401);
    t.is(res.body.error.code, 'auth.test_key');
    t.deepEqual(Object.keys(res.body.error.details), ['docs_url']);
  }
});

test('GET /v1/transactions refuses bad filters, pages and formats with validation_error naming the field', async (t) => {
  const td = await startTestDaemon(CHAINS);
  t.teardown(() => td.stop());
  const m = await merchant(td);
  await recordTransaction(td.daemon.store, { accountId: m.accountId, coinId: BTC, amount: '1' });
  const before = await signedGet(td.url, m.key, '/v1/transactions');
  const cases: Array<[string, string]> = [
    ['type=refund', 'type'],
    ['status=done', 'status'],
    ['coin_id=BTC', 'coin_id'],
    ['invoice_id=123', 'invoice_id'],
    ['address_id=%27%20OR%201%3D1', 'address_id'],
    ['from=2026-03-01', 'from'],
    ['from=yesterday', 'from'],
    ['to=2026-13-01T00:00:00Z', 'to'],
    ['from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z', 'to'],
    ['from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'to'],
    ['type=deposit&type=withdrawal', 'type'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=not*valid', 'cursor'],
    ['cursor=WyJ4IiwieSIsInoiXQ', 'cursor'],
    ['format=pdf', 'format'],
    ['format=CSV', 'format'],
    ['format=', 'format'],
  ];
  for (const [query, field] of cases) {
    const res = await signedGet(td.url, m.key, `/v1/transactions?${query}`);
    t.is(res.status, 400, query);
    t.is(res.body.error.code, 'validation_error', query);
    t.deepEqual(res.body.error.details, { field }, query);
  }
  t.deepEqual((await signedGet(td.url, m.key, '/v1/transactions')).body, before.body);
});

test('GET /v1/balances refuses a bad limit or cursor with validation_error naming the field', async (t) => {
  const td = await startTestDaemon(CHAINS);
  t.teardown(() => td.stop());
  const m = await merchant(td);
  const tx = await signedGet(td.url, m.key, '/v1/transactions?limit=1');
  for (const [query, field] of [
    ['limit=0', 'limit'],
    ['limit=x', 'limit'],
    ['cursor=abc', 'cursor'],
    [`cursor=${tx.body.next_cursor ?? 'WyJ4Il0'}`, 'cursor'],
  ] as const) {
    const res = await signedGet(td.url, m.key, `/v1/balances?${query}`);
    t.is(res.status, 400, query);
    t.is(res.body.error.code, 'validation_error');
    t.deepEqual(res.body.error.details, { field }, query);
  }
});
