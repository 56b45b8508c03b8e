import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { call } from '../../helpers/api-client';
import { CliEnv } from '../../helpers/cli';
import { merchantWithKey, startPreparedDaemon, startTestDaemon } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';
import { signRequest } from '../../helpers/signer';
import { configFromText } from '../../../src/config/load';
import { startDaemon } from '../../../src/daemon/main';
import { FakeClock } from '../../../src/shared/clock';
import { silentLogger } from '../../../src/shared/logger';

/**
 * Issue 14 §8: a captured signed request cannot be replayed after a restart of the daemon, whether
 * it stopped cleanly or was killed (kill -9); on PostgreSQL the replay store expires its rows by
 * the database's clock.
 */

const ENDPOINTS = '/v1/webhooks/endpoints';

interface Key {
  keyId: string;
  secret: string;
}

/** A signed POST creating a webhook endpoint, as a merchant back end sends it (and an attacker captures it). */
function capturedPost(key: Key, url: string, timestamp?: number): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({ url, event_types: ['invoice.paid'] });
  const headers = signRequest({ keyId: key.keyId, secret: key.secret, method: 'POST', target: ENDPOINTS, body, timestamp });
  return { headers: { ...headers, 'Content-Type': 'application/json' }, body };
}

const send = (base: string, req: { headers: Record<string, string>; body: string }) =>
  call(base, ENDPOINTS, { method: 'POST', headers: req.headers, body: req.body });

/** The account's endpoints, read with a signature timestamped after any restart's start. */
async function endpointCount(base: string, key: Key): Promise<number> {
  const target = `${ENDPOINTS}?count=${randomBytes(4).toString('hex')}`;
  const timestamp = Math.floor(Date.now() / 1000) + 2;
  const res = await call(base, target, { headers: signRequest({ keyId: key.keyId, secret: key.secret, method: 'GET', target, timestamp }) });
  if (res.status !== 200) throw new Error(`GET endpoints: ${res.status} ${res.text}`);
  return (res.json.items as unknown[]).length;
}

test('a signed POST resent after a clean restart is auth.replay and creates nothing; one signed before but never sent is served', async (t) => {
  const d = await startTestDaemon();
  const m = await merchantWithKey(d.daemon);
  const captured = capturedPost(m, 'http://127.0.0.1:9/first');
  const neverSent = capturedPost(m, 'http://127.0.0.1:9/second');
  t.is((await send(d.url, captured)).status, 201);

  await d.daemon.stop();
  const again = await startDaemon(d.daemon.config, { logger: silentLogger });
  t.teardown(async () => {
    await again.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });
  const replayed = await send(again.apiUrl, captured);
  t.is(replayed.status, 401, replayed.text);
  t.is(replayed.json.error.code, 'auth.replay');
  t.is(await endpointCount(again.apiUrl, m), 1, 'nothing created by the replay');
  t.is((await send(again.apiUrl, neverSent)).status, 201, 'the guard was restored, not wiped: an unseen signature is served');
  t.is(await endpointCount(again.apiUrl, m), 2);
});

test('a guard saved by an older version (digests of the signatures) is not restored: a signed POST resent after the upgrade is auth.replay', async (t) => {
  const d = await startTestDaemon();
  const m = await merchantWithKey(d.daemon);
  const captured = capturedPost(m, 'http://127.0.0.1:9/first');
  t.is((await send(d.url, captured)).status, 201);

  await d.daemon.stop();
  // What the version before this one saved: a closed file of SHA-256 digests of the signatures.
  const file = path.join(d.dataDir, 'replay-guard.json');
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { state: string; entries: Array<[string, string, number]> };
  t.is(saved.state, 'closed');
  const digest = createHash('sha256').update(captured.headers['X-Signature']!).digest('base64');
  writeFileSync(file, JSON.stringify({ state: 'closed', entries: saved.entries.map(([, owner, index]) => [digest, owner, index]) }));
  const again = await startDaemon(d.daemon.config, { logger: silentLogger });
  t.teardown(async () => {
    await again.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });
  const replayed = await send(again.apiUrl, captured);
  t.is(replayed.status, 401, replayed.text);
  t.is(replayed.json.error.code, 'auth.replay');
  t.is(await endpointCount(again.apiUrl, m), 1, 'nothing created by the replay');
});

test('a signed POST resent after the daemon was killed (kill -9) and started again is auth.replay and creates nothing', async (t) => {
  const env = new CliEnv({ log_level: 'info' });
  t.teardown(() => env.cleanup());
  const config = configFromText(readFileSync(env.configFile, 'utf8'));
  const setup = await startPreparedDaemon(config);
  const m = await merchantWithKey(setup);
  await setup.stop();

  const first = await env.spawnDaemon();
  const captured = capturedPost(m, 'http://127.0.0.1:9/first');
  t.is((await send(first.url, captured)).status, 201);
  t.is((await first.child.stop('SIGKILL')).signal, 'SIGKILL');

  const second = await env.spawnDaemon();
  const replayed = await send(second.url, captured);
  t.is(replayed.status, 401, replayed.text);
  t.is(replayed.json.error.code, 'auth.replay');
  t.is(await endpointCount(second.url, m), 1, 'nothing created by the replay');
  await second.child.stop('SIGTERM');
});

test('PostgreSQL: the replay store expires a signature by the database clock, whatever the daemon clock says, and keeps a digest only', async (t) => {
  const url = await tempPostgres(t);
  // This daemon's clock runs two hours ahead of the database's.
  const clock = new FakeClock(Date.now() + 2 * 3600_000);
  const d = await startTestDaemon({ database: { url } }, { clock });
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const target = '/v1/account/api-keys';
  const headers = signRequest({ keyId: m.keyId, secret: m.secret, method: 'GET', target, timestamp: Math.floor(clock.now().getTime() / 1000) });
  t.is((await call(d.url, target, { headers })).status, 200);

  const [row] = (await d.daemon.store.ds.query(
    `SELECT signature, EXTRACT(EPOCH FROM (expires_at::timestamptz - now())) AS ttl FROM replay_signatures`,
  )) as Array<{ signature: string; ttl: string }>;
  t.truthy(row);
  const ttl = Number(row!.ttl);
  t.true(ttl > 600 && ttl <= 660, `expires ${ttl} s after the database's now`);
  t.not(row!.signature, headers['X-Signature']);
});
