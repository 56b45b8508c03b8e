import test from 'ava';
import { randomBytes } from 'node:crypto';
import { call, freshSourceIp, SignedClient } from '../../helpers/api-client';
import { until } from '../../helpers/cli';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';

/**
 * Issue 3 §1: several daemons sharing one PostgreSQL database. A signature accepted by one daemon
 * is a replay at every other, and a key change made at one reaches the others within their 2 s key
 * cache. Both daemons open the same secrets: they share the master key, as a real deployment must.
 * When the replay store cannot answer, SPEC's 503 `unavailable` ("the authentication store").
 */

const TARGET = '/v1/account/api-keys';

test.before(() => {
  // This file's worker only: both daemons read the master key from the environment.
  process.env.COINKEEP_MASTER_KEY = randomBytes(32).toString('base64url');
  // And the signer key: each daemon's signer opens the one seed they share.
  process.env.COINKEEP_SIGNER_KEY = randomBytes(32).toString('base64url');
});

test('two daemons on one PostgreSQL: a signature accepted by one is auth.replay at the other; a disabled key is refused by both', async (t) => {
  const url = await tempPostgres(t);
  const a = await startTestDaemon({ database: { url } });
  t.teardown(() => a.stop());
  const b = await startTestDaemon({ database: { url } });
  t.teardown(() => b.stop());

  const m = await merchantWithKey(a.daemon);
  const from = freshSourceIp();
  const client = new SignedClient(a.url, m.keyId, m.secret);

  const headers = client.headers('GET', TARGET);
  t.is((await call(a.url, TARGET, { headers, from })).status, 200);
  const replayed = await call(b.url, TARGET, { headers, from });
  t.is(replayed.status, 401, replayed.text);
  t.is(replayed.json.error.code, 'auth.replay');
  t.is(replayed.headers['www-authenticate'], 'Service-HMAC-SHA256');

  // The other way round, and a fresh signature works at both.
  const second = client.headers('GET', TARGET);
  t.is((await call(b.url, TARGET, { headers: second, from })).status, 200);
  t.is((await call(a.url, TARGET, { headers: second, from })).json.error.code, 'auth.replay');

  // A key disabled through daemon A is refused by daemon B once its short key cache lapses.
  await a.daemon.keys.disable(m.accountId, m.keyId, { email: m.owner });
  t.is((await call(a.url, TARGET, { headers: client.headers('GET', TARGET), from })).json.error.code, 'auth.invalid_key');
  const started = Date.now();
  await until(
    async () => (await call(b.url, TARGET, { headers: client.headers('GET', TARGET), from })).json.error?.code === 'auth.invalid_key',
    5000,
    'daemon B to see the disabled key',
  );
  t.true(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
});

test('when the replay store cannot answer, a signed request is 503 unavailable, never let through', async (t) => {
  const url = await tempPostgres(t);
  const d = await startTestDaemon({ database: { url } });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const from = freshSourceIp();

  await d.daemon.store.ds.query('ALTER TABLE replay_signatures RENAME TO replay_signatures_away');
  const refused = await client.get(TARGET, { from });
  t.is(refused.status, 503, refused.text);
  t.is(refused.json.error.code, 'unavailable');
  t.is(refused.headers['x-ratelimit-remaining'], undefined, 'no token spent');
  t.is((await call(d.url, '/v1/currencies', { from })).status, 200, 'the public catalogue still answers');

  await d.daemon.store.ds.query('ALTER TABLE replay_signatures_away RENAME TO replay_signatures');
  const ok = await client.get(TARGET, { from });
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-ratelimit-remaining'], '599');
});
