import test, { type ExecutionContext } from 'ava';
import { ApiKeyEntity } from '../../../src/db/entities/auth';
import { call, freshSourceIp, SignedClient, type ApiResponse } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { signRequest } from '../../helpers/signer';

/**
 * SPEC "Authentication" → "Checks and rules" and issue 3 §1, through the real daemon: every auth
 * error row with its status, code and details, in the order that keeps the no-oracle rule. Each
 * test sends from its own loopback address so the per-IP failure counter never mixes tests.
 */

const TARGET = '/v1/account/api-keys';
let d: TestDaemon;

test.before(async () => {
  d = await startTestDaemon();
});
test.after.always(async () => {
  await d?.stop();
});

async function merchant(opts: Parameters<typeof merchantWithKey>[1] = {}) {
  const m = await merchantWithKey(d.daemon, opts);
  return { ...m, client: new SignedClient(d.url, m.keyId, m.secret) };
}

/** Asserts the envelope, X-API-Version, and WWW-Authenticate on every 401 (absent otherwise). */
function assertError(t: ExecutionContext, res: ApiResponse, status: number, code: string): Record<string, unknown> {
  t.is(res.status, status, res.text);
  t.is(res.json?.error?.code, code, res.text);
  t.is(res.headers['x-api-version'], 'v1');
  if (status === 401) t.is(res.headers['www-authenticate'], 'Service-HMAC-SHA256');
  else t.is(res.headers['www-authenticate'], undefined);
  // Only an authenticated request (valid signature, active key, allowed address) spends and shows a token.
  const authenticated = status === 403 && code !== 'auth.ip_not_allowed';
  t.is(res.headers['x-ratelimit-remaining'] !== undefined, authenticated, 'a refused authentication shows no token count');
  return res.json.error.details as Record<string, unknown>;
}

const nowSec = () => Math.floor(Date.now() / 1000);

test('a missing signature header is 401 auth.missing_header naming it', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  const full = m.client.headers('GET', TARGET);
  for (const h of ['X-API-Key', 'X-Timestamp', 'X-Signature']) {
    const headers = { ...full };
    delete headers[h];
    const details = assertError(t, await call(d.url, TARGET, { headers, from }), 401, 'auth.missing_header');
    t.is(details.field, h);
  }
  assertError(t, await call(d.url, TARGET, { from }), 401, 'auth.missing_header');
  // An empty value is missing too.
  assertError(t, await call(d.url, TARGET, { headers: { ...full, 'X-Signature': '' }, from }), 401, 'auth.missing_header');
});

test('a timestamp that is not whole seconds is 401 auth.invalid_timestamp', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  for (const ts of ['abc', '12.5', `${nowSec()}.0`, '1e9', '-', `+${nowSec()}`, '0x10']) {
    const headers = m.client.headers('GET', TARGET, undefined, { timestamp: ts });
    t.deepEqual(assertError(t, await call(d.url, TARGET, { headers, from }), 401, 'auth.invalid_timestamp'), {});
  }
});

test('a timestamp over 300 s from server time is 401 auth.expired_timestamp with details.server_time', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  for (const ts of [nowSec() - 301, nowSec() + 302, Date.now(), 0]) {
    const res = await m.client.get(TARGET, { from, headers: m.client.headers('GET', TARGET, undefined, { timestamp: ts }) });
    const details = assertError(t, res, 401, 'auth.expired_timestamp');
    t.true(Math.abs(Number(details.server_time) - nowSec()) <= 2);
    t.true(Number.isInteger(details.server_time));
  }
  // 299 s off still works.
  const ok = await m.client.get(TARGET, { from, headers: m.client.headers('GET', TARGET, undefined, { timestamp: nowSec() - 299 }) });
  t.is(ok.status, 200, ok.text);
});

test('without a valid signature every key state answers the same auth.invalid_signature', async (t) => {
  const from = freshSourceIp();
  const healthy = await merchant();
  const disabled = await merchant();
  await d.daemon.keys.disable(disabled.accountId, disabled.keyId, { email: disabled.owner });
  const revoked = await merchant();
  await d.daemon.keys.revoke(revoked.accountId, revoked.keyId, { email: revoked.owner });
  const frozen = await merchant();
  await d.daemon.team.freeze(frozen.accountId, { kind: 'operator' });
  const fenced = await merchant({ ip: ['192.0.2.1'] });
  const noRead = await merchant({ permissions: ['create_invoice'] });

  const wrongSecret = 'w'.repeat(43);
  const sendWith = (keyId: string, secret: string, mangle?: (h: Record<string, string>) => void) => {
    const headers = signRequest({ keyId, secret, method: 'GET', target: TARGET, timestamp: nowSec() });
    mangle?.(headers);
    return call(d.url, TARGET, { headers, from });
  };
  const answers: Array<[string, ApiResponse]> = [
    ['unknown well-formed key', await sendWith('ck_live_AAAAAAAAAAAAAAAAAAAAAAAA', wrongSecret)],
    ['unknown test key', await sendWith('ck_test_AAAAAAAAAAAAAAAAAAAAAAAA', wrongSecret)],
    ['malformed key id', await sendWith('not-a-key', wrongSecret)],
    ['bad signature', await sendWith(healthy.keyId, wrongSecret)],
    ['signature not hex', await sendWith(healthy.keyId, healthy.secret, (h) => (h['X-Signature'] = 'Z'.repeat(64)))],
    ['upper-case hex', await sendWith(healthy.keyId, healthy.secret, (h) => (h['X-Signature'] = h['X-Signature']!.toUpperCase()))],
    ['short signature', await sendWith(healthy.keyId, healthy.secret, (h) => (h['X-Signature'] = h['X-Signature']!.slice(0, 63)))],
    ['disabled', await sendWith(disabled.keyId, wrongSecret)],
    ['revoked', await sendWith(revoked.keyId, wrongSecret)],
    ['frozen account', await sendWith(frozen.keyId, wrongSecret)],
    ['IP outside the whitelist', await sendWith(fenced.keyId, wrongSecret)],
    ['lacks the permission', await sendWith(noRead.keyId, wrongSecret)],
    ["another key's secret", await sendWith(healthy.keyId, disabled.secret)],
  ];
  const first = answers[0]![1];
  for (const [what, res] of answers) {
    assertError(t, res, 401, 'auth.invalid_signature');
    t.deepEqual(res.json, first.json, what);
    t.deepEqual(res.json.error.details, {}, what);
  }
  // The body is signed as received: a changed target or body does not verify.
  const h = healthy.client.headers('GET', TARGET);
  assertError(t, await call(d.url, `${TARGET}?limit=5`, { headers: h, from }), 401, 'auth.invalid_signature');
  const hb = healthy.client.headers('GET', TARGET, '{"a":1}');
  assertError(t, await call(d.url, TARGET, { headers: hb, body: '{"a":2}', from }), 401, 'auth.invalid_signature');
  t.is((await call(d.url, TARGET, { headers: healthy.client.headers('GET', TARGET, '{"a":1}'), body: '{"a":1}', from })).status, 200);
});

test('only a valid signature learns the key state: invalid_key, ip_not_allowed, account_frozen, permission_denied', async (t) => {
  const from = freshSourceIp();
  const disabled = await merchant();
  await d.daemon.keys.disable(disabled.accountId, disabled.keyId, { email: disabled.owner });
  t.deepEqual(assertError(t, await disabled.client.get(TARGET, { from }), 401, 'auth.invalid_key'), {});

  const revoked = await merchant();
  await d.daemon.keys.revoke(revoked.accountId, revoked.keyId, { email: revoked.owner });
  assertError(t, await revoked.client.get(TARGET, { from }), 401, 'auth.invalid_key');

  const fenced = await merchant({ ip: ['192.0.2.0/24', '127.0.0.250'] });
  const ipDetails = assertError(t, await fenced.client.get(TARGET, { from }), 403, 'auth.ip_not_allowed');
  t.is(ipDetails.ip, from);
  const inside = await fenced.client.get(TARGET, { from: '127.0.0.250' });
  t.is(inside.status, 200, inside.text);

  const frozen = await merchant();
  await d.daemon.team.freeze(frozen.accountId, { kind: 'operator' });
  assertError(t, await frozen.client.get(TARGET, { from }), 403, 'account_frozen');
  assertError(t, await frozen.client.get('/v1/currencies', { from }), 403, 'account_frozen');
  await d.daemon.team.unfreeze(frozen.accountId);
  t.is((await frozen.client.get(TARGET, { from })).status, 200);

  const noRead = await merchant({ permissions: ['create_invoice'] });
  const permDetails = assertError(t, await noRead.client.get(TARGET, { from }), 403, 'auth.permission_denied');
  t.is(permDetails.required, 'read');

  // Re-enabled, the disabled key works again; a revoked one cannot be enabled.
  await d.daemon.keys.enable(disabled.accountId, disabled.keyId, { email: disabled.owner });
  t.is((await disabled.client.get(TARGET, { from })).status, 200);
  await t.throwsAsync(d.daemon.keys.enable(revoked.accountId, revoked.keyId, { email: revoked.owner }));
  assertError(t, await revoked.client.get(TARGET, { from }), 401, 'auth.invalid_key');
});

test('a signature accepted once is refused afterwards with auth.replay', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  const headers = m.client.headers('GET', TARGET);
  t.is((await call(d.url, TARGET, { headers, from })).status, 200);
  assertError(t, await call(d.url, TARGET, { headers, from }), 401, 'auth.replay');
  assertError(t, await call(d.url, TARGET, { headers, from: freshSourceIp() }), 401, 'auth.replay');
  // Signed again (another timestamp) the same request passes.
  t.is((await m.client.get(TARGET, { from })).status, 200);
  // A refused signature (bad) is not remembered: the correct one with that timestamp still works.
  const ts = nowSec() - 250;
  const good = m.client.headers('GET', TARGET, undefined, { timestamp: ts });
  assertError(t, await call(d.url, TARGET, { headers: { ...good, 'X-Signature': '0'.repeat(64) }, from }), 401, 'auth.invalid_signature');
  t.is((await call(d.url, TARGET, { headers: good, from })).status, 200);
});

test('the signed target is the path and query exactly as sent, percent-encoding included', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  const target = '/v1/currencies?note=caf%C3%A9&x=a%2Fb';
  const res = await m.client.get(target, { from });
  t.is(res.status, 200, res.text);
  // The same query decoded differently does not verify.
  const h = m.client.headers('GET', '/v1/currencies?note=café&x=a/b');
  assertError(t, await call(d.url, target, { headers: h, from }), 401, 'auth.invalid_signature');
});

test('signed GET /v1/currencies needs a valid signature; unsigned it is the public catalogue', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  const pub = await call(d.url, '/v1/currencies', { from });
  t.is(pub.status, 200);
  t.deepEqual(Object.keys(pub.json), ['items']);
  t.is(pub.headers['x-ratelimit-limit'], undefined);
  const signed = await m.client.get('/v1/currencies', { from });
  t.is(signed.status, 200, signed.text);
  t.deepEqual(signed.json, pub.json);
  t.is(signed.headers['x-ratelimit-limit'], '600');
  // Any signature header makes it a signed request: half-signed or badly signed is refused, not served publicly.
  assertError(t, await call(d.url, '/v1/currencies', { headers: { 'X-API-Key': m.keyId }, from }), 401, 'auth.missing_header');
  assertError(t, await m.client.get('/v1/currencies', { from, secret: 'x'.repeat(43) }), 401, 'auth.invalid_signature');
  // A key without read is refused on the signed variant.
  const noRead = await merchant({ permissions: ['create_address'] });
  t.is(assertError(t, await noRead.client.get('/v1/currencies', { from }), 403, 'auth.permission_denied').required, 'read');
});

test('bad input changes nothing: refused requests leave keys untouched', async (t) => {
  const m = await merchant();
  const from = freshSourceIp();
  const before = await d.daemon.store.read.findOneByOrFail(ApiKeyEntity, { key_id: m.keyId });
  for (let i = 0; i < 5; i++) await m.client.get(TARGET, { from, secret: 'y'.repeat(43) });
  const after = await d.daemon.store.read.findOneByOrFail(ApiKeyEntity, { key_id: m.keyId });
  t.deepEqual(after, before);
});
