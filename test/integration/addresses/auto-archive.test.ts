import test from 'ava';
import { ARCHIVE_WARNING_MS } from '../../../src/jobs/archive-static-addresses.job';
import { FakeClock } from '../../../src/shared/clock';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

const DAY = 24 * 3600_000;

const create = async (f: InvoiceFixture, body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/addresses', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

const runJob = (f: InvoiceFixture, archiveAfterDays = 180) =>
  f.td.daemon.staticAddresses.service.archiveIdle({ archiveAfterMs: archiveAfterDays * DAY, warnMs: ARCHIVE_WARNING_MS });

test('an address idle for 180 days is warned 7 days before and then archived; a deposit starts the count again', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startInvoiceFixture({ clock });
  t.teardown(() => f.stop());
  const idle = await create(f, { customer_id: 'idle', coin_id: COINS.ETH, label: 'L' });
  const busy = await create(f, { customer_id: 'busy', coin_id: COINS.ETH });

  clock.advance(173 * DAY - 1000);
  t.deepEqual(await runJob(f), { warned: 0, archived: 0 });
  clock.advance(1000);
  t.deepEqual(await runJob(f), { warned: 2, archived: 0 });
  t.deepEqual(await runJob(f), { warned: 0, archived: 0 }, 'warned once');
  let warnings = await f.events('static_address.archive_warning');
  t.deepEqual(warnings.map((e) => e.object_id).sort(), [idle.id, busy.id].sort());
  const warning = warnings.find((e) => e.object_id === idle.id)!;
  t.like(warning.data, { address: { id: idle.id, status: 'active', label: 'L' } });
  t.is(warning.data.archive_at, new Date(new Date(idle.created_at).getTime() + 180 * DAY).toISOString());

  // A deposit to one of them: active for another 180 days.
  clock.advance(3 * DAY);
  await f.chain('ethereum').pay(busy.address, COINS.ETH, '1');
  clock.advance(4 * DAY);
  t.deepEqual(await runJob(f), { warned: 0, archived: 1 });
  t.like((await f.api.get(`/v1/addresses/${idle.id}`)).body, { status: 'archived' });
  t.like((await f.api.get(`/v1/addresses/${busy.id}`)).body, { status: 'active' });
  const archived = await f.events('static_address.archived');
  t.is(archived.length, 1);
  t.like(archived[0]!.data, { address: { id: idle.id, status: 'archived' }, reason: 'inactive' });

  clock.advance(173 * DAY - 3 * DAY);
  t.deepEqual(await runJob(f), { warned: 1, archived: 0 });
  warnings = await f.events('static_address.archive_warning');
  t.is(warnings.length, 3);
  clock.advance(7 * DAY);
  t.deepEqual(await runJob(f), { warned: 0, archived: 1 });
  t.like((await f.api.get(`/v1/addresses/${busy.id}`)).body, { status: 'archived' });
});

test('a restored address counts its idle period from the restore; a short configured period archives at once after its warning', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startInvoiceFixture({ clock, overrides: { static_addresses: { archive_after_days: 0.01 } } });
  t.teardown(() => f.stop());
  t.is(f.td.daemon.config.static_addresses.archive_after_days, 0.01);
  const a = await create(f, { customer_id: 'c', coin_id: COINS.BTC });
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`)).status, 200);
  clock.advance(200 * DAY);
  t.is((await f.api.post(`/v1/addresses/${a.id}/restore`)).status, 200);
  // The warning lead is longer than the whole period: it is sent at the first run.
  t.deepEqual(await runJob(f, 0.01), { warned: 1, archived: 0 });
  clock.advance(0.01 * DAY);
  t.deepEqual(await runJob(f, 0.01), { warned: 0, archived: 1 });
  t.deepEqual(
    (await f.events()).map((e) => e.type),
    ['static_address.archived', 'static_address.restored', 'static_address.archive_warning', 'static_address.archived'],
  );
});
