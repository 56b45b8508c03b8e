import test from 'ava';
import { adminCall, DaemonRefusal } from '../../../src/cli/admin-client';
import type { DashboardSnapshot } from '../../../src/admin/contract';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';

let td: TestDaemon;
let accountId: string;
test.before(async () => {
  td = await startTestDaemon();
  accountId = (await merchantWithKey(td.daemon)).accountId;
});
test.after.always(async () => {
  await td?.stop();
});

const get = (query: string) => adminCall<DashboardSnapshot>(td.dataDir, 'GET', `/admin/dashboard${query}`);

test('the dashboard snapshot answers the daemon facts and only the screen asked for, for one account or all', async (t) => {
  const all = await get('?screen=keys');
  t.like(all.daemon, { network: 'testnet', database: 'sqlite', pid: process.pid });
  t.deepEqual(Object.keys(all).sort(), ['accounts', 'at', 'daemon', 'keys']);
  t.deepEqual(all.accounts.map((a) => a.id), [accountId]);
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
  t.deepEqual((await get('?screen=keys')).accounts.map((a) => a.id), [accountId], 'nothing changed');
});
