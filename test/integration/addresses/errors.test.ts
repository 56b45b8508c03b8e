import test, { type ExecutionContext } from 'ava';
import { StaticAddressEntity } from '../../../src/db/entities/static-address';
import { newId } from '../../../src/shared/ids';
import { merchantWithKey } from '../../helpers/daemon';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';
import { signRequest } from '../../helpers/signer';

interface Key {
  keyId: string;
  secret: string;
}
interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** A signed request as a merchant back end sends it; `headers` override the signed ones, `omit` drops some. */
async function call(
  f: InvoiceFixture,
  key: Key,
  method: string,
  target: string,
  body?: string,
  opts: { headers?: Record<string, string>; timestamp?: number | string; omit?: string[] } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...signRequest({ ...key, method, target, body, timestamp: opts.timestamp }), ...opts.headers };
  for (const h of opts.omit ?? []) delete headers[h];
  const res = await fetch(f.td.url + target, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
}

const expectError = (t: ExecutionContext, res: Answer, status: number, code: string, details: Record<string, unknown>, what: string) => {
  t.is(res.status, status, `${what} ${code}: ${JSON.stringify(res.body)}`);
  t.is(res.body?.error?.code, code, what);
  t.deepEqual(res.body?.error?.details, details, what);
  t.is(typeof res.body?.error?.message, 'string', what);
};

/** Every route of this part: method, path (`{id}` an address of the merchant), body, permission. */
const ROUTES: Array<[string, string, string | undefined, string]> = [
  ['POST', '/v1/addresses', JSON.stringify({ customer_id: 'new-customer', coin_id: COINS.ETH }), 'create_address'],
  ['GET', '/v1/addresses', undefined, 'read'],
  ['GET', '/v1/addresses/{id}', undefined, 'read'],
  ['POST', '/v1/addresses/{id}/archive', undefined, 'create_address'],
  ['POST', '/v1/addresses/{id}/restore', undefined, 'create_address'],
];

for (const [method, path, body, permission] of ROUTES) {
  test(`${method} ${path}: each authentication and limit error of SPEC with status, code and details; none changes anything`, async (t) => {
    const f = await startInvoiceFixture();
    t.teardown(() => f.stop());
    const key = { keyId: f.api.keyId, secret: f.api.secret };
    const a = (await f.api.post('/v1/addresses', { customer_id: 'c', coin_id: COINS.BTC })).body;
    const merchant = async (opts: Parameters<typeof merchantWithKey>[1] = {}) => {
      const m = await merchantWithKey(f.td.daemon, opts);
      return { ...m, key: { keyId: m.keyId, secret: m.secret } };
    };
    const walled = await merchant({ ip: ['10.0.0.0/8'] });
    const disabled = await merchant();
    await f.td.daemon.keys.disable(disabled.accountId, disabled.keyId, { email: disabled.owner });
    const frozen = await merchant();
    await f.td.daemon.team.freeze(frozen.accountId, { kind: 'member', email: frozen.owner });
    const snapshot = async () => ({ ...(await f.counts()), rows: await f.td.daemon.store.read.find(StaticAddressEntity, { order: { id: 'ASC' } }) });
    const before = await snapshot();

    const target = path.replace('{id}', a.id);
    const what = `${method} ${path}`;
    expectError(
      t,
      await call(f, key, method, target, body, { headers: { 'X-API-Version': 'v2' } }),
      400,
      'unsupported_api_version',
      { supported: ['v1'] },
      what,
    );
    for (const h of ['X-API-Key', 'X-Timestamp', 'X-Signature']) {
      expectError(t, await call(f, key, method, target, body, { omit: [h] }), 401, 'auth.missing_header', { field: h }, what);
    }
    expectError(t, await call(f, key, method, target, body, { timestamp: '12.5' }), 401, 'auth.invalid_timestamp', {}, what);
    const expired = await call(f, key, method, target, body, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    t.is(expired.body.error.code, 'auth.expired_timestamp', what);
    t.deepEqual(Object.keys(expired.body.error.details), ['server_time'], what);
    expectError(t, await call(f, { keyId: key.keyId, secret: 'x'.repeat(43) }, method, target, body), 401, 'auth.invalid_signature', {}, what);
    expectError(t, await call(f, walled.key, method, path.replace('{id}', newId()), body), 403, 'auth.ip_not_allowed', { ip: '127.0.0.1' }, what);
    const other = await merchant({ permissions: [permission === 'read' ? 'create_address' : 'read'] });
    expectError(t, await call(f, other.key, method, path.replace('{id}', newId()), body), 403, 'auth.permission_denied', { required: permission }, what);
    expectError(t, await call(f, disabled.key, method, path.replace('{id}', newId()), body), 401, 'auth.invalid_key', {}, what);
    expectError(t, await call(f, frozen.key, method, path.replace('{id}', newId()), body), 403, 'account_frozen', {}, what);

    const limited = await merchant({ rateLimit: 1 });
    const first = Math.floor(Date.now() / 1000);
    const limitedTarget = path.replace('{id}', newId());
    t.not((await call(f, limited.key, 'GET', '/v1/addresses?n=1', undefined, { timestamp: first })).status, 429, what);
    const over = await call(f, limited.key, method, limitedTarget, body, { timestamp: first - 1 });
    t.is(over.status, 429, what);
    t.is(over.body.error.code, 'rate_limited', what);
    t.is(over.body.error.details.scope, 'key', what);
    t.is(over.headers.get('retry-after'), String(over.body.error.details.retry_after), what);
    t.deepEqual(await snapshot(), before);

    if (method === 'GET') {
      const headers = signRequest({ ...key, method, target: path.replace('{id}', a.id) });
      t.is((await fetch(f.td.url + path.replace('{id}', a.id), { headers })).status, 200);
      const replay = await fetch(f.td.url + path.replace('{id}', a.id), { headers });
      expectError(t, { status: replay.status, headers: replay.headers, body: await replay.json() }, 401, 'auth.replay', {}, `${method} ${path}`);
    }
  });
}

test('POST /v1/addresses: a body over 1 MiB is 413 payload_too_large and nothing is issued', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const key = { keyId: f.api.keyId, secret: f.api.secret };
  const body = JSON.stringify({ customer_id: 'c', coin_id: COINS.BTC, label: 'x'.repeat(1024 * 1024) });
  expectError(t, await call(f, key, 'POST', '/v1/addresses', body), 413, 'payload_too_large', { limit_bytes: 1048576 }, 'POST /v1/addresses');
  t.is(await f.td.daemon.store.read.count(StaticAddressEntity), 0);
  t.is((await f.counts()).addresses, 0);
});
