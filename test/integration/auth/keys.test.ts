import test, { type ExecutionContext } from 'ava';
import { ApiKeyEntity } from '../../../src/db/entities/auth';
import { FakeClock } from '../../../src/shared/clock';
import { ApiError } from '../../../src/shared/errors';
import { call, freshSourceIp, SignedClient, type ApiResponse } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { signRequest } from '../../helpers/signer';

/**
 * Keys through the real daemon: rotation and the 10-minute grace of the previous secret (on a fake
 * clock), test keys and environments (SPEC "Test keys and environments" 1–4).
 */

const TARGET = '/v1/account/api-keys';

function assertError(t: ExecutionContext, res: ApiResponse, status: number, code: string): Record<string, unknown> {
  t.is(res.status, status, res.text);
  t.is(res.json?.error?.code, code, res.text);
  if (status === 401) t.is(res.headers['www-authenticate'], 'Service-HMAC-SHA256');
  return res.json.error.details as Record<string, unknown>;
}

test('rotation: the previous secret works for 10 minutes, then answers auth.invalid_signature', async (t) => {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  const d = await startTestDaemon({}, { clock });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const from = freshSourceIp();
  const first = new SignedClient(d.url, m.keyId, m.secret, clock);

  const rotated = await d.daemon.keys.rotate(m.accountId, m.keyId, { email: m.owner });
  const secondSecret = rotated.key.secret as string;
  t.is(secondSecret.length, 43);
  t.not(secondSecret, m.secret);
  t.is(rotated.key.previous_secret_valid_until, new Date(clock.now().getTime() + 600_000).toISOString());
  const second = new SignedClient(d.url, m.keyId, secondSecret, clock);

  t.is((await first.get(TARGET, { from })).status, 200);
  const listed = await second.get(TARGET, { from });
  t.is(listed.status, 200);
  t.is(listed.json.items[0].previous_secret_valid_until, rotated.key.previous_secret_valid_until);
  t.is(listed.json.items[0].secret_last4, secondSecret.slice(-4));
  t.false(JSON.stringify(listed.json).includes(secondSecret));

  clock.advance(600_000 - 1000);
  t.is((await first.get(TARGET, { from })).status, 200, 'still inside the grace');
  clock.advance(2000);
  assertError(t, await first.get(TARGET, { from }), 401, 'auth.invalid_signature');
  t.is((await second.get(TARGET, { from })).status, 200);
});

test('rotation: at most two secrets verify; rotating again inside the window drops the oldest', async (t) => {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  const d = await startTestDaemon({}, { clock });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const from = freshSourceIp();
  const s2 = (await d.daemon.keys.rotate(m.accountId, m.keyId, { email: m.owner })).key.secret as string;
  clock.advance(60_000);
  const s3 = (await d.daemon.keys.rotate(m.accountId, m.keyId, { email: m.owner })).key.secret as string;
  const c = (secret: string) => new SignedClient(d.url, m.keyId, secret, clock);
  assertError(t, await c(m.secret).get(TARGET, { from }), 401, 'auth.invalid_signature');
  t.is((await c(s2).get(TARGET, { from })).status, 200);
  t.is((await c(s3).get(TARGET, { from })).status, 200);
});

const departures = {
  'leaves the team': (d: TestDaemon, accountId: string, email: string) => d.daemon.team.removeMember(accountId, { kind: 'operator' }, email),
  'changes role': (d: TestDaemon, accountId: string, email: string) => d.daemon.team.setRole(accountId, { kind: 'operator' }, email, 'admin'),
};
for (const [what, depart] of Object.entries(departures)) {
  test(`rotation: a previous secret ends early when its holder ${what}`, async (t) => {
    const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
    const d = await startTestDaemon({}, { clock });
    t.teardown(() => d.stop());
    const m = await merchantWithKey(d.daemon);
    const from = freshSourceIp();
    const dev = 'dev@example.com';
    await d.daemon.team.addMember(m.accountId, { kind: 'operator' }, dev, 'developer');
    const devKey = (await d.daemon.keys.create(m.accountId, { email: dev }, { name: 'dev key', permissions: ['read'] })).key;
    const devSecret = devKey.secret;
    const ownerSecret = (await d.daemon.keys.rotate(m.accountId, devKey.key_id, { email: m.owner })).key.secret as string;
    const old = new SignedClient(d.url, devKey.key_id, devSecret, clock);
    const current = new SignedClient(d.url, devKey.key_id, ownerSecret, clock);
    t.is((await old.get(TARGET, { from })).status, 200, 'the developer’s secret is in its grace');

    await depart(d, m.accountId, dev);
    assertError(t, await old.get(TARGET, { from }), 401, 'auth.invalid_signature');
    const listed = await current.get(TARGET, { from });
    t.is(listed.status, 200);
    const key = listed.json.items.find((k: { key_id: string }) => k.key_id === devKey.key_id);
    t.is(key.previous_secret_valid_until, null, 'the grace is over');
  });
}

test('testnet accepts both kinds of key; a key of another install is auth.invalid_signature', async (t) => {
  const a = await startTestDaemon();
  const b = await startTestDaemon();
  t.teardown(async () => {
    await a.stop();
    await b.stop();
  });
  const from = freshSourceIp();
  const live = await merchantWithKey(a.daemon);
  const testKey = await merchantWithKey(a.daemon, { test: true });
  t.true(live.keyId.startsWith('ck_live_'));
  t.true(testKey.keyId.startsWith('ck_test_'));
  for (const k of [live, testKey]) {
    const res = await new SignedClient(a.url, k.keyId, k.secret).get(TARGET, { from });
    t.is(res.status, 200, res.text);
    t.is(res.json.items[0].network, 'testnet');
    assertError(t, await new SignedClient(b.url, k.keyId, k.secret).get(TARGET, { from }), 401, 'auth.invalid_signature');
  }
});

test('mainnet: a ck_test_ key is 401 auth.test_key with docs_url on every request, before any lookup; creating one is validation_error on mode', async (t) => {
  const d = await startTestDaemon({ network: 'mainnet' });
  t.teardown(() => d.stop());
  const from = freshSourceIp();
  const live = await merchantWithKey(d.daemon);
  const before = await d.daemon.store.read.count(ApiKeyEntity);

  const now = Math.floor(Date.now() / 1000);
  const unknownTest = (target: string, ts: number | string = now) =>
    call(d.url, target, {
      from,
      headers: signRequest({ keyId: 'ck_test_AAAAAAAAAAAAAAAAAAAAAAAA', secret: 'whatever', method: 'GET', target, timestamp: ts }),
    });
  for (const target of [TARGET, '/v1/currencies', '/v1/fiat-currencies', '/v1/rates?fiat=USD']) {
    const details = assertError(t, await unknownTest(target), 401, 'auth.test_key');
    t.is(details.docs_url, 'http://127.0.0.1:8420/docs/test-keys', "the install's base_url");
  }
  // The page it links is served by the install itself, unsigned, and says what runs here.
  const page = await call(d.url, '/docs/test-keys', { from });
  t.is(page.status, 200);
  t.regex(String(page.headers['content-type']), /^text\/plain/);
  t.regex(page.text, /This install runs on mainnets/);
  t.regex(page.text, /auth\.test_key/);
  // The prefix alone decides: any key id starting with ck_test_, known or not, well-formed or not.
  const odd = call(d.url, TARGET, { from, headers: { 'X-API-Key': 'ck_test_x', 'X-Timestamp': String(now), 'X-Signature': 'a'.repeat(64) } });
  assertError(t, await odd, 401, 'auth.test_key');
  // Earlier checks come first: the timestamp.
  assertError(t, await unknownTest(TARGET, now - 1000), 401, 'auth.expired_timestamp');

  const err = await t.throwsAsync(d.daemon.keys.create(live.accountId, { email: live.owner }, { name: 'x', permissions: ['read'], test: true }));
  t.true(err instanceof ApiError);
  t.is((err as ApiError).code, 'validation_error');
  t.is((err as ApiError).details.field, 'mode');
  t.is(await d.daemon.store.read.count(ApiKeyEntity), before, 'nothing created');

  const ok = await new SignedClient(d.url, live.keyId, live.secret).get(TARGET, { from });
  t.is(ok.status, 200, ok.text);
  t.is(ok.json.items[0].network, 'mainnet');
});

test('withdraw rule 8: a developer who does not hold the secret of a payout key hears 409 withdraw_requires_rotation for a whitelist change or a re-enable, and nothing changes; after rotating it they may', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const [holder, other] = ['holder@example.com', 'other@example.com'];
  for (const email of [holder, other]) await d.daemon.team.addMember(m.accountId, { kind: 'operator' }, email, 'developer');
  const payout = (await d.daemon.keys.create(m.accountId, { email: holder }, { name: 'payouts', permissions: ['read', 'withdraw'] })).key;
  t.is(payout.withdraw_status, 'pending');
  await d.daemon.keys.disable(m.accountId, payout.key_id, { email: holder });
  const before = await d.daemon.keys.show(m.accountId, payout.key_id);

  const rotationFirst = { status: 409, code: 'conflict', details: { reason: 'withdraw_requires_rotation' } };
  for (const ask of [
    () => d.daemon.keys.update(m.accountId, payout.key_id, { email: other }, { ip_whitelist: ['10.0.0.0/8'] }),
    () => d.daemon.keys.enable(m.accountId, payout.key_id, { email: other }),
  ]) {
    t.like(await t.throwsAsync(ask(), { instanceOf: ApiError }), rotationFirst);
    t.deepEqual(await d.daemon.keys.show(m.accountId, payout.key_id), before, 'nothing changed');
  }
  // A change that asks for no withdraw stays the holder's or creator's.
  t.like(await t.throwsAsync(d.daemon.keys.update(m.accountId, payout.key_id, { email: other }, { name: 'mine' }), { instanceOf: ApiError }), {
    status: 403,
    code: 'forbidden',
  });

  const rotated = await d.daemon.keys.rotate(m.accountId, payout.key_id, { email: other });
  const otherId = (await d.daemon.team.memberByEmail(d.daemon.store.read, m.accountId, other)).id;
  t.is(rotated.key.secret_holder, otherId);
  const enabled = await d.daemon.keys.enable(m.accountId, payout.key_id, { email: other });
  t.like(enabled.key, { status: 'active', withdraw_status: 'pending' });
  const [request] = await d.daemon.keys.withdrawRequests(m.accountId);
  t.is(request!.request!.requested_by, otherId, 'the new request is theirs');
});
