import test from 'ava';
import { adminCall, DaemonRefusal } from '../../../src/cli/admin-client';
import type { DashboardSnapshot } from '../../../src/admin/contract';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { signedGet } from '../../helpers/signed-get';

let td: TestDaemon;
let accountId: string;
let key: { keyId: string; secret: string };
test.before(async () => {
  td = await startTestDaemon();
  const m = await merchantWithKey(td.daemon);
  accountId = m.accountId;
  key = { keyId: m.keyId, secret: m.secret };
});
test.after.always(async () => {
  await td?.stop();
});

const get = (query: string) => adminCall<DashboardSnapshot>(td.dataDir, 'GET', `/admin/dashboard${query}`);

test.serial('the dashboard snapshot answers the daemon facts and only the screen asked for, for one account or all', async (t) => {
  const all = await get('?screen=keys');
  t.like(all.daemon, { network: 'testnet', database: 'sqlite', pid: process.pid });
  t.deepEqual(Object.keys(all).sort(), ['accounts', 'at', 'daemon', 'keys']);
  t.deepEqual(
    all.accounts.map((a) => a.id),
    [accountId],
  );
  t.is(all.keys!.items.length, 1);
  t.is(all.keys!.items[0]!.last_used_at, null);
  const overview = await get(`?screen=overview&account=${accountId}`);
  t.deepEqual(overview.overview?.fee_balances, []);
  t.like(overview.overview, { invoices_last_hour: {}, balances: [], webhook_queue: { pending: 0, failing: 0, exhausted: 0 }, payout_queue: {} });
});

test('a wrong screen, level or account is refused with the field named and nothing else answered', async (t) => {
  for (const [query, status, field] of [
    ['?screen=nope', 'validation_error', 'screen'],
    ['?screen=log&level=loud', 'validation_error', 'level'],
    ['?screen=log&account=', 'validation_error', 'account'],
  ] as const) {
    const err = await t.throwsAsync(get(query), { instanceOf: DaemonRefusal });
    t.is(err!.envelope.code, status, query);
    t.is(err!.envelope.details.field, field, query);
  }
  const missing = await t.throwsAsync(get('?screen=overview&account=00000000-0000-4000-8000-000000000000'), { instanceOf: DaemonRefusal });
  t.is(missing!.envelope.code, 'not_found');
  t.deepEqual(
    (await get('?screen=keys')).accounts.map((a) => a.id),
    [accountId],
    'nothing changed',
  );
});

test.serial("a key's last use reaches the Keys screen within a flush (about 10 s), never per request", async (t) => {
  const before = Date.now();
  t.is((await signedGet(td.url, key, '/v1/balances')).status, 200);
  let used: string | null = null;
  for (const deadline = Date.now() + 20_000; used === null && Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    used = (await get('?screen=keys')).keys!.items[0]!.last_used_at;
  }
  t.truthy(used, 'written by the flush job');
  t.true(Date.parse(used!) >= before - 1000 && Date.parse(used!) <= Date.now(), used!);
  // A refused signature is no use of the key.
  t.is((await signedGet(td.url, { ...key, secret: 'x'.repeat(43) }, '/v1/balances')).status, 401);
});
