import test, { type ExecutionContext } from 'ava';
import { call, freshSourceIp, SignedClient, type ApiResponse } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';

/**
 * SPEC "Limits" through the real daemon: the per-key token bucket, refused authentications never
 * spending a key's tokens, and the per-IP block after repeated refusals (a correct request too).
 * Each test sends from its own loopback address.
 */

const TARGET = '/v1/account/api-keys';
let d: TestDaemon;

test.before(async () => {
  d = await startTestDaemon();
});
test.after.always(async () => {
  await d?.stop();
});

async function merchant(rateLimit?: number) {
  const m = await merchantWithKey(d.daemon, { rateLimit });
  return { ...m, client: new SignedClient(d.url, m.keyId, m.secret) };
}

function assertRateLimited(t: ExecutionContext, res: ApiResponse, scope: string): number {
  t.is(res.status, 429, res.text);
  t.is(res.json?.error?.code, 'rate_limited');
  t.is(res.json.error.details.scope, scope);
  t.is(res.headers['x-api-version'], 'v1');
  const retry = Number(res.headers['retry-after']);
  t.true(Number.isInteger(retry) && retry >= 1, `Retry-After ${res.headers['retry-after']}`);
  t.is(res.json.error.details.retry_after, retry);
  return retry;
}

test('per-key token bucket: X-RateLimit-* on every authenticated answer, then 429 scope key with Retry-After', async (t) => {
  const m = await merchant(3);
  const from = freshSourceIp();
  for (const remaining of ['2', '1', '0']) {
    const res = await m.client.get(TARGET, { from });
    t.is(res.status, 200, res.text);
    t.is(res.headers['x-ratelimit-limit'], '3');
    t.is(res.headers['x-ratelimit-remaining'], remaining);
  }
  const over = await m.client.get(TARGET, { from });
  const retry = assertRateLimited(t, over, 'key');
  t.true(retry <= 20, 'one token of 3/min is due within 20 s');
  t.is(over.headers['x-ratelimit-limit'], '3');
  t.is(over.headers['x-ratelimit-remaining'], '0');
  // Other keys and other routes of other keys are not affected.
  const other = await merchant(3);
  t.is((await other.client.get('/v1/currencies', { from })).status, 200);
  // The public catalogue stays open to the limited key's owner (it costs no tokens).
  t.is((await call(d.url, '/v1/currencies', { from })).status, 200);
  assertRateLimited(t, await m.client.get('/v1/currencies', { from }), 'key');
});

test('the limit is adjustable per key and takes effect at once', async (t) => {
  const m = await merchant(2);
  const from = freshSourceIp();
  t.is((await m.client.get(TARGET, { from })).headers['x-ratelimit-limit'], '2');
  await d.daemon.keys.update(m.accountId, m.keyId, { email: m.owner }, { rate_limit_per_minute: 50 });
  const res = await m.client.get(TARGET, { from });
  t.is(res.status, 200);
  t.is(res.headers['x-ratelimit-limit'], '50');
});

test('unauthenticated requests never consume the key’s tokens', async (t) => {
  const m = await merchant(3);
  const from = freshSourceIp();
  const now = Math.floor(Date.now() / 1000);
  // Refused before a valid signature: bad signature, expired, invalid timestamp, missing header.
  for (let i = 0; i < 4; i++) await m.client.get(TARGET, { from, secret: 'z'.repeat(43) });
  await call(d.url, TARGET, { from, headers: m.client.headers('GET', TARGET, undefined, { timestamp: now - 400 }) });
  await call(d.url, TARGET, { from, headers: m.client.headers('GET', TARGET, undefined, { timestamp: 'soon' }) });
  await call(d.url, TARGET, { from, headers: { 'X-API-Key': m.keyId } });
  // A replay is refused with a valid signature, yet it is not an authenticated request either.
  const once = m.client.headers('GET', TARGET);
  t.is((await call(d.url, TARGET, { from, headers: once })).headers['x-ratelimit-remaining'], '2');
  t.is((await call(d.url, TARGET, { from, headers: once })).json.error.code, 'auth.replay');
  for (const remaining of ['1', '0']) {
    const res = await m.client.get(TARGET, { from });
    t.is(res.status, 200, res.text);
    t.is(res.headers['x-ratelimit-remaining'], remaining);
  }
});

test('a signed request the key may not make spends a token; one from outside its IP whitelist does not', async (t) => {
  const m = await merchantWithKey(d.daemon, { rateLimit: 3, permissions: ['create_invoice'], ip: ['127.0.0.0/24'] });
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const inside = freshSourceIp();
  // A leaked secret used from elsewhere cannot drain the key's budget.
  for (let i = 0; i < 5; i++) {
    const res = await client.get(TARGET, { from: '127.0.1.1' });
    t.is(res.json.error.code, 'auth.ip_not_allowed');
    t.is(res.headers['x-ratelimit-remaining'], undefined);
  }
  // A key that keeps asking for what it may not do is limited like any other.
  for (const remaining of ['2', '1', '0']) {
    const res = await client.get(TARGET, { from: inside });
    t.is(res.json.error.code, 'auth.permission_denied', res.text);
    t.is(res.headers['x-ratelimit-remaining'], remaining);
  }
  assertRateLimited(t, await client.get(TARGET, { from: inside }), 'key');
});

test('an address that keeps failing is blocked: every request from it is 429 scope ip, a correct one too', async (t) => {
  const m = await merchant();
  const bad = freshSourceIp();
  // 20 refused authentications in a minute (documented threshold) start a block.
  for (let i = 0; i < 20; i++) {
    const res = await m.client.get(TARGET, { from: bad, secret: 'q'.repeat(43) });
    t.is(res.status, 401);
  }
  const first = assertRateLimited(t, await m.client.get(TARGET, { from: bad }), 'ip');
  t.true(first > 50 && first <= 60, `first block about a minute, got ${first}`);
  // Signed catalogue, public catalogue, other keys: all refused from that address.
  assertRateLimited(t, await m.client.get('/v1/currencies', { from: bad }), 'ip');
  assertRateLimited(t, await call(d.url, '/v1/currencies', { from: bad }), 'ip');
  const other = await merchant();
  const again = assertRateLimited(t, await other.client.get(TARGET, { from: bad }), 'ip');
  // Repeating while blocked lengthens the block.
  t.true(again > first, `block lengthened: ${first} → ${again}`);
  // The key itself is fine from elsewhere, and its tokens were not spent by the refusals.
  const ok = await m.client.get(TARGET, { from: freshSourceIp() });
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-ratelimit-remaining'], '599');
});

test('fewer refusals than the threshold do not block', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  for (let i = 0; i < 19; i++) t.is((await m.client.get(TARGET, { from, secret: 'r'.repeat(43) })).status, 401);
  const ok = await m.client.get(TARGET, { from });
  t.is(ok.status, 200, ok.text);
});
