import test from 'ava';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { ApiKeyEntity, type ApiKeyRow } from '../../../src/db/entities/auth';
import { newRouter } from '../../../src/http/context';
import { createLogger } from '../../../src/shared/logger';
import { call, SignedClient, type ApiResponse } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';

/**
 * Issue 2 §5 through the real daemon: version header, body limit, JSON bodies, 404s, the 500
 * envelope, optional blocks, keyset pagination. A test-only router (mounted through the daemon's
 * `extraRouters`) echoes what the body layer handed on and throws on demand.
 */

const logLines: string[] = [];
let d: TestDaemon;
let client: SignedClient;
let accountId: string;

test.before(async () => {
  d = await startTestDaemon(
    {},
    {
      logger: createLogger({ level: 'error', write: (line) => logLines.push(line) }),
      extraRouters: () => {
        const r = newRouter('/test');
        r.post('/echo', (ctx) => {
          ctx.body = { bytes: ctx.state.rawBody.length, keys: Object.keys(ctx.state.body) };
        });
        r.get('/boom', () => {
          throw new Error('kaboom: internal detail that must not leak');
        });
        return [r];
      },
    },
  );
  const m = await merchantWithKey(d.daemon);
  accountId = m.accountId;
  client = new SignedClient(d.url, m.keyId, m.secret);
});

test.after.always(async () => {
  await d?.stop();
});

function assertError(t: import('ava').ExecutionContext, res: ApiResponse, status: number, code: string): Record<string, unknown> {
  t.is(res.status, status, res.text);
  t.is(res.headers['x-api-version'], 'v1');
  t.is(res.json?.error?.code, code, res.text);
  t.is(typeof res.json?.error?.message, 'string');
  t.is(typeof res.json?.error?.details, 'object');
  return res.json.error.details as Record<string, unknown>;
}

test('X-API-Version: v1 on success, client errors, 401 and 404', async (t) => {
  const ok = await call(d.url, '/v1/currencies');
  t.is(ok.status, 200);
  t.is(ok.headers['x-api-version'], 'v1');
  t.is(ok.headers['content-type'], 'application/json; charset=utf-8');
  t.is((await call(d.url, '/healthz')).headers['x-api-version'], 'v1');
  assertError(t, await call(d.url, '/v1/nope'), 404, 'not_found');
  assertError(t, await call(d.url, '/v1/account/api-keys'), 401, 'auth.missing_header');
  assertError(t, await call(d.url, '/test/echo', { method: 'POST', body: '{', headers: { 'Content-Type': 'application/json' } }), 400, 'validation_error');
});

/** Raw bytes to the API port; the whole answer, split into its status, headers and JSON body. */
function rawRequest(bytes: string): Promise<{ status: number; headers: string; json: any }> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = net.connect(Number(url.port), url.hostname, () => socket.end(bytes));
    socket.setEncoding('utf8').on('data', (c: string) => (text += c));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), json: JSON.parse(body) });
    });
  });
}

test('what Node refuses before the app (oversized headers, malformed HTTP) is in the envelope too', async (t) => {
  const big = await rawRequest(`GET /v1/currencies HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.is(big.status, 431);
  t.true(big.headers.includes('x-api-version: v1'));
  t.deepEqual(big.json.error.details, { field: 'headers' });
  t.is(big.json.error.code, 'validation_error');

  const garbled = await rawRequest('NOT-HTTP at all\r\n\r\n');
  t.is(garbled.status, 400);
  t.true(garbled.headers.includes('x-api-version: v1'));
  t.like(garbled.json.error, { code: 'validation_error', details: { field: 'request' } });
  t.is((await call(d.url, '/healthz')).status, 200, 'the daemon serves on');
});

test('a request pinning v1 is served; another version is 400 unsupported_api_version with details.supported', async (t) => {
  const pinned = await call(d.url, '/v1/currencies', { headers: { 'X-API-Version': 'v1' } });
  t.is(pinned.status, 200);
  for (const v of ['v2', 'V1', '1', 'v1.1']) {
    const details = assertError(t, await call(d.url, '/v1/currencies', { headers: { 'X-API-Version': v } }), 400, 'unsupported_api_version');
    t.deepEqual(details.supported, ['v1']);
  }
  // Checked before authentication and routing too.
  assertError(t, await call(d.url, '/v1/account/api-keys', { headers: { 'X-API-Version': 'v9' } }), 400, 'unsupported_api_version');
  assertError(t, await call(d.url, '/nowhere', { headers: { 'X-API-Version': 'v9' } }), 400, 'unsupported_api_version');
});

test('a body over 1 MiB is 413 payload_too_large, declared or streamed; exactly 1 MiB is read', async (t) => {
  const MiB = 1024 * 1024;
  const json = (size: number) => {
    const prefix = '{"a":"';
    return `${prefix}${'x'.repeat(size - prefix.length - 2)}"}`;
  };
  const exact = json(MiB);
  t.is(Buffer.byteLength(exact), MiB);
  const okRes = await call(d.url, '/test/echo', { method: 'POST', body: exact, headers: { 'Content-Type': 'application/json' } });
  t.is(okRes.status, 200, okRes.text);
  t.deepEqual(okRes.json, { bytes: MiB, keys: ['a'] });

  const declared = await call(d.url, '/test/echo', { method: 'POST', body: json(MiB + 1), headers: { 'Content-Type': 'application/json' } });
  const details = assertError(t, declared, 413, 'payload_too_large');
  t.is(details.limit_bytes, MiB);
  const streamed = await call(d.url, '/test/echo', { method: 'POST', body: json(3 * MiB), chunked: true, headers: { 'Content-Type': 'application/json' } });
  assertError(t, streamed, 413, 'payload_too_large');
  // Refused before routing and before authentication.
  assertError(
    t,
    await call(d.url, '/v1/account/api-keys', { method: 'POST', body: json(MiB + 1), headers: { 'Content-Type': 'application/json' } }),
    413,
    'payload_too_large',
  );
  // The daemon still serves afterwards.
  t.is((await call(d.url, '/v1/currencies')).status, 200);
});

test('malformed JSON, a non-object JSON body and a wrong Content-Type are 400 validation_error with details.field', async (t) => {
  const post = (body: string, contentType?: string) =>
    call(d.url, '/test/echo', { method: 'POST', body, headers: contentType ? { 'Content-Type': contentType } : {} });
  for (const bad of ['{', '{"a":1,}', 'nul', '\u00ff\u00fe', '{"a":1} x']) {
    t.is(assertError(t, await post(bad, 'application/json'), 400, 'validation_error').field, 'body', bad);
  }
  for (const notObject of ['[]', '[1,2]', '"text"', '42', 'null', 'true']) {
    t.is(assertError(t, await post(notObject, 'application/json'), 400, 'validation_error').field, 'body', notObject);
  }
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', undefined]) {
    t.is(assertError(t, await post('{"a":1}', ct), 400, 'validation_error').field, 'Content-Type', String(ct));
  }
  // Accepted: parameters on the media type, any case; an empty body is {}.
  t.deepEqual((await post('{"a":1}', 'Application/JSON; charset=utf-8')).json, { bytes: 7, keys: ['a'] });
  t.deepEqual((await call(d.url, '/test/echo', { method: 'POST' })).json, { bytes: 0, keys: [] });
});

test('unknown routes are 404 not_found in the envelope; a wrong method on a known path is 404 too', async (t) => {
  for (const target of ['/', '/v1', '/v1/unknown', '/v2/currencies', '/v1/currencies/extra']) {
    assertError(t, await call(d.url, target), 404, 'not_found');
  }
  for (const [method, target] of [
    ['POST', '/v1/currencies'],
    ['DELETE', '/v1/currencies'],
    ['PUT', '/healthz'],
    ['PATCH', '/v1/account/api-keys'],
  ]) {
    const res = await call(d.url, target!, { method });
    assertError(t, res, 404, 'not_found');
    t.is(res.headers['allow'], undefined);
  }
});

test('an unexpected failure is 500 internal_error with a request id in details and in the log, never a stack', async (t) => {
  const res = await call(d.url, '/test/boom');
  const details = assertError(t, res, 500, 'internal_error');
  t.regex(String(details.request_id), /^[0-9a-f-]{36}$/);
  t.deepEqual(Object.keys(details), ['request_id']);
  t.false(res.text.includes('kaboom'));
  t.false(/\bat .*\.js:\d+/.test(res.text));
  const logged = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.request_id === details.request_id);
  t.truthy(logged, 'the request id is in the log');
  t.true(String(logged!.error).includes('kaboom'));
});

test('optional blocks are present as null', async (t) => {
  const res = await client.get('/v1/account/api-keys');
  t.is(res.status, 200, res.text);
  const key = res.json.items[0] as Record<string, unknown>;
  t.true('previous_secret_valid_until' in key);
  t.is(key.previous_secret_valid_until, null);
  t.false('secret' in key);
  t.is(res.json.next_cursor, null);
});

test('GET /v1/account/api-keys gives each key the fields of PRODUCT §5, and never a secret', async (t) => {
  const res = await client.get('/v1/account/api-keys');
  t.is(res.status, 200, res.text);
  const key = res.json.items.find((k: { key_id: string }) => k.key_id === client.keyId) as Record<string, unknown>;
  t.deepEqual(Object.keys(key).sort(), [
    'created_at',
    'ip_whitelist',
    'key_id',
    'name',
    'network',
    'permissions',
    'previous_secret_valid_until',
    'rate_limit_per_minute',
    'rotation_required',
    'secret_generation',
    'secret_holder',
    'secret_last4',
    'status',
    'withdraw_status',
  ]);
  t.like(key, {
    name: 'backend',
    network: 'testnet',
    withdraw_status: 'none',
    status: 'active',
    rate_limit_per_minute: 600,
    secret_generation: 1,
    rotation_required: false,
    ip_whitelist: [],
  });
  t.deepEqual(key.permissions, ['read', 'create_invoice', 'create_address']);
  t.is(key.secret_last4, client.secret.slice(-4));
  t.regex(String(key.secret_holder), /^[0-9a-f-]{36}$/);
  t.regex(String(key.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.false(res.text.includes(client.secret));
});

// ---- keyset pagination over the real GET /v1/account/api-keys ----

let seq = 0;
function keyRow(account: string, createdAt: string, status: ApiKeyRow['status'] = 'active'): ApiKeyRow {
  const n = String(seq++).padStart(24, '0');
  return {
    id: randomUUID(),
    account_id: account,
    key_id: `ck_live_${n}`,
    name: `seeded ${n}`,
    network: 'testnet',
    permissions: 'read',
    withdraw_status: 'none',
    withdraw_granted_by: null,
    withdraw_request: null,
    ip_whitelist: '[]',
    rate_limit_per_minute: 600,
    status,
    secret_sealed: 'not-a-secret',
    secret_last4: 'xxxx',
    secret_holder: 'seed',
    secret_generation: 1,
    rotation_required: false,
    previous_secret_sealed: null,
    previous_secret_holder: null,
    previous_secret_valid_until: null,
    created_by: 'seed',
    created_at: createdAt,
    updated_at: createdAt,
  };
}

const insertRows = (rows: ApiKeyRow[]) => d.daemon.store.write((em) => em.insert(ApiKeyEntity, rows));

/** A merchant of its own with `n` seeded keys; three keys share each created_at so ties are exercised. */
async function seededMerchant(n: number, status: (i: number) => ApiKeyRow['status'] = () => 'active') {
  const m = await merchantWithKey(d.daemon);
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  await insertRows(Array.from({ length: n }, (_, i) => keyRow(m.accountId, new Date(base + Math.floor(i / 3) * 1000).toISOString(), status(i))));
  return { ...m, client: new SignedClient(d.url, m.keyId, m.secret) };
}

test('pagination: rows inserted between page requests are neither skipped nor repeated', async (t) => {
  const m = await seededMerchant(31);
  const before = (await d.daemon.store.read.findBy(ApiKeyEntity, { account_id: m.accountId })).map((r) => r.key_id);
  t.is(before.length, 32);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  let inserted = 0;
  do {
    const target: string = `/v1/account/api-keys?limit=7${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await m.client.get(target);
    t.is(res.status, 200, res.text);
    t.true(res.json.items.length <= 7);
    seen.push(...(res.json.items as Array<{ key_id: string }>).map((k) => k.key_id));
    cursor = res.json.next_cursor;
    pages++;
    // Between pages: a newer row, a row tied with the last one seen, and one far older.
    const last = res.json.items[res.json.items.length - 1] as { created_at: string };
    await insertRows([keyRow(m.accountId, new Date().toISOString()), keyRow(m.accountId, last.created_at), keyRow(m.accountId, '2025-01-01T00:00:00.000Z')]);
    inserted += 3;
  } while (cursor !== null && pages < 50);

  t.is(new Set(seen).size, seen.length, 'no row repeated');
  for (const id of before) t.true(seen.includes(id), `row ${id} skipped`);
  // Newest first: created_at never increases along the walk for the rows present at the start.
  const all = await d.daemon.store.read.findBy(ApiKeyEntity, { account_id: m.accountId });
  t.is(all.length, 32 + inserted);
  const at = new Map(all.map((r) => [r.key_id, r.created_at]));
  const walk = seen.map((k) => at.get(k)!);
  for (let i = 1; i < walk.length; i++) t.true(walk[i - 1]! >= walk[i]!);
});

test('pagination: limit 1..100, default 20, anything else validation_error on limit; nothing is changed', async (t) => {
  const m = await seededMerchant(120);
  t.is((await m.client.get('/v1/account/api-keys')).json.items.length, 20);
  t.is((await m.client.get('/v1/account/api-keys?limit=1')).json.items.length, 1);
  const hundred = await m.client.get('/v1/account/api-keys?limit=100');
  t.is(hundred.json.items.length, 100);
  t.is(typeof hundred.json.next_cursor, 'string');
  for (const bad of ['0', '101', '-1', 'abc', '1.5', '', '1e2', '0x10', '20&limit=30']) {
    const details = assertError(t, await m.client.get(`/v1/account/api-keys?limit=${bad}`), 400, 'validation_error');
    t.is(details.field, 'limit', bad);
  }
  const last = await m.client.get(`/v1/account/api-keys?limit=100&cursor=${hundred.json.next_cursor}`);
  t.is(last.json.items.length, 21);
  t.is(last.json.next_cursor, null);
  t.is(await d.daemon.store.read.countBy(ApiKeyEntity, { account_id: m.accountId }), 121);
});

test('pagination: a cursor is bound to its filters; a forged or foreign-filter cursor is validation_error on cursor', async (t) => {
  const m = await seededMerchant(12, (i) => (i % 2 ? 'disabled' : 'active'));
  const disabled = await m.client.get('/v1/account/api-keys?status=disabled&limit=2');
  t.is(disabled.status, 200, disabled.text);
  t.true((disabled.json.items as Array<{ status: string }>).every((k) => k.status === 'disabled'));
  const cursor = disabled.json.next_cursor as string;
  t.is((await m.client.get(`/v1/account/api-keys?status=disabled&limit=2&cursor=${cursor}`)).status, 200);
  // Another limit keeps the same filters: allowed.
  t.is((await m.client.get(`/v1/account/api-keys?status=disabled&limit=5&cursor=${cursor}`)).status, 200);
  for (const target of [
    `/v1/account/api-keys?cursor=${cursor}`,
    `/v1/account/api-keys?status=active&cursor=${cursor}`,
    '/v1/account/api-keys?cursor=not-a-cursor!',
    `/v1/account/api-keys?cursor=${Buffer.from('["x","y"]').toString('base64url')}`,
    `/v1/account/api-keys?status=disabled&cursor=${cursor.slice(0, -2)}`,
  ]) {
    t.is(assertError(t, await m.client.get(target), 400, 'validation_error').field, 'cursor', target);
  }
  t.is(assertError(t, await m.client.get('/v1/account/api-keys?status=lost'), 400, 'validation_error').field, 'status');
});

test('pagination: another merchant never sees these rows', async (t) => {
  const other = await merchantWithKey(d.daemon);
  const c = new SignedClient(d.url, other.keyId, other.secret);
  const res = await c.get('/v1/account/api-keys?limit=100');
  t.is(res.json.items.length, 1);
  t.is(res.json.items[0].key_id, other.keyId);
  t.not(other.accountId, accountId);
});
