import { rmSync } from 'node:fs';
import test from 'ava';
import { startDaemon } from '../../../src/daemon/main';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { FakeClock } from '../../../src/shared/clock';
import { silentLogger } from '../../../src/shared/logger';
import { until } from '../../helpers/cli';
import { merchantWithKey } from '../../helpers/daemon';
import { FakeAllocator } from '../../helpers/fake-allocator';
import { ApiClient, COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

let f: InvoiceFixture;
let other: ApiClient;
test.before(async () => {
  f = await startInvoiceFixture();
  const m = await merchantWithKey(f.td.daemon);
  other = new ApiClient(f.td.url, m.keyId, m.secret);
});
test.after.always(async () => {
  await f?.stop();
});

const create = async (api: ApiClient, body: Record<string, unknown> = {}) => {
  const res = await api.post('/v1/invoices', { amount: '1', currency: 'USD', ...body });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body;
};

test.serial("GET /v1/invoices/{id} of another account's invoice, an unknown id or a non-id is 404 not_found", async (t) => {
  const mine = await create(f.api);
  for (const target of [`/v1/invoices/${mine.id}`, '/v1/invoices/00000000-0000-4000-8000-000000000000', '/v1/invoices/abc']) {
    const res = await other.get(target);
    t.is(res.status, 404, target);
    t.is(res.body.error.code, 'not_found');
  }
  t.is((await f.api.get(`/v1/invoices/${mine.id}`)).status, 200);
});

test.serial('GET /v1/invoices pages by keyset, newest first, and rows inserted meanwhile never shift a page', async (t) => {
  const m = await merchantWithKey(f.td.daemon);
  const api = new ApiClient(f.td.url, m.keyId, m.secret);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push((await create(api, { order_id: `p-${i}` })).id);
  const p1 = await api.get('/v1/invoices?limit=2');
  t.is(p1.status, 200);
  t.deepEqual(
    p1.body.items.map((i: { id: string }) => i.id),
    [made[4], made[3]],
  );
  t.truthy(p1.body.next_cursor);
  await create(api, { order_id: 'late-arrival' });
  const p2 = await api.get(`/v1/invoices?limit=2&cursor=${p1.body.next_cursor}`);
  t.deepEqual(
    p2.body.items.map((i: { id: string }) => i.id),
    [made[2], made[1]],
  );
  const p3 = await api.get(`/v1/invoices?limit=2&cursor=${p2.body.next_cursor}`);
  t.deepEqual(
    p3.body.items.map((i: { id: string }) => i.id),
    [made[0]],
  );
  t.is(p3.body.next_cursor, null);
  // Only the account's own invoices are listed.
  const all = await api.get('/v1/invoices?limit=100');
  t.is(all.body.items.length, 6);
});

test.serial('GET /v1/invoices filters by status, order_id, created_from (inclusive) and created_to (exclusive)', async (t) => {
  const m = await merchantWithKey(f.td.daemon);
  const api = new ApiClient(f.td.url, m.keyId, m.secret);
  const a = await create(api, { order_id: 'f-a' });
  await until(() => Date.now() > Date.parse(a.created_at), 5000, 'the clock to pass the first invoice');
  const b = await create(api, { order_id: 'f-b' });
  await api.post(`/v1/invoices/${a.id}/cancel`);
  const ids = async (q: string) => (await api.get(`/v1/invoices${q}`)).body.items.map((i: { id: string }) => i.id);
  t.deepEqual(await ids('?status=cancelled'), [a.id]);
  t.deepEqual(await ids('?status=new'), [b.id]);
  t.deepEqual(await ids('?order_id=f-b'), [b.id]);
  t.deepEqual(await ids(`?created_from=${encodeURIComponent(b.created_at)}`), [b.id]);
  t.deepEqual(await ids(`?created_to=${encodeURIComponent(b.created_at)}`), [a.id]);
});

for (const [q, field] of [
  ['?status=done', 'status'],
  ['?created_from=yesterday', 'created_from'],
  ['?created_to=2026-13-01T00:00:00Z', 'created_to'],
  ['?limit=0', 'limit'],
  ['?limit=101', 'limit'],
  ['?cursor=not-a-cursor', 'cursor'],
  ['?status=new&status=paid', 'status'],
  ['?format=pdf', 'format'],
] as const) {
  test.serial(`GET /v1/invoices${q} is 400 validation_error on ${field}`, async (t) => {
    const res = await f.api.get(`/v1/invoices${q}`);
    t.is(res.status, 400);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, field);
  });
}

test.serial('a cursor replayed with other filters is 400 validation_error on cursor', async (t) => {
  await create(f.api);
  await create(f.api);
  const p1 = await f.api.get('/v1/invoices?limit=1');
  const res = await f.api.get(`/v1/invoices?limit=1&status=paid&cursor=${p1.body.next_cursor}`);
  t.is(res.status, 400);
  t.is(res.body.error.details.field, 'cursor');
});

test.serial('POST /v1/invoices/{id}/cancel cancels a new invoice; a second cancel is 409 conflict and changes nothing', async (t) => {
  const inv = await create(f.api, { coin_id: COINS.BTC });
  const res = await f.api.post(`/v1/invoices/${inv.id}/cancel`);
  t.is(res.status, 200);
  t.is(res.body.status, 'cancelled');
  const before = await f.td.daemon.store.read.findOneByOrFail(InvoiceEntity, { id: inv.id });
  const again = await f.api.post(`/v1/invoices/${inv.id}/cancel`);
  t.is(again.status, 409);
  t.is(again.body.error.code, 'conflict');
  t.deepEqual(await f.td.daemon.store.read.findOneByOrFail(InvoiceEntity, { id: inv.id }), before);
});

test.serial('cancel of a pending invoice is 409 conflict', async (t) => {
  const inv = await create(f.api, { amount: '0.1', currency: 'ETH', coin_id: COINS.ETH });
  await f.chain('ethereum').send(inv.address, COINS.ETH, '0.1');
  const res = await f.api.post(`/v1/invoices/${inv.id}/cancel`);
  t.is(res.status, 409);
  t.is(res.body.error.code, 'conflict');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'pending');
});

test.serial("cancel of another account's invoice is 404 not_found and changes nothing", async (t) => {
  const inv = await create(f.api);
  const res = await other.post(`/v1/invoices/${inv.id}/cancel`);
  t.is(res.status, 404);
  t.is(res.body.error.code, 'not_found');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'new');
});

test('the TTL passes: expired with expired_at and invoice.expired in the outbox; cancel is then 409', async (t) => {
  const clock = new FakeClock(new Date());
  const g = await startInvoiceFixture({ clock });
  t.teardown(() => g.stop());
  await g.setAccount({ invoice_ttl_minutes: 5 });
  const inv = await create(g.api, { coin_id: COINS.BTC });
  t.is(Date.parse(inv.ttl_expires_at) - Date.parse(inv.created_at), 5 * 60_000);
  clock.advance(5 * 60_000);
  t.is(await g.td.daemon.invoices.service.expireDue(), 0);
  clock.advance(1000);
  t.is(await g.td.daemon.invoices.service.expireDue(), 1);
  const got = (await g.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'expired');
  t.is(got.expired_at, inv.ttl_expires_at);
  const events = await g.events('invoice.expired');
  t.is(events.length, 1);
  t.deepEqual(events[0]!.data.invoice, got);
  const cancel = await g.api.post(`/v1/invoices/${inv.id}/cancel`);
  t.is(cancel.status, 409);
});

test('a restart after downtime expires at once what fell due meanwhile', async (t) => {
  const g = await startInvoiceFixture();
  const config = g.td.daemon.config;
  t.teardown(() => rmSync(config.data_dir, { recursive: true, force: true }));
  const inv = await create(g.api);
  await g.td.daemon.store.write((em) => em.update(InvoiceEntity, { id: inv.id }, { ttl_expires_at: '2020-01-01T00:00:00.000Z' }));
  await g.td.daemon.stop();
  const again = await startDaemon(config, { logger: silentLogger, allocator: new FakeAllocator(() => 'bitcoin') });
  t.teardown(() => again.stop());
  const row = await again.store.read.findOneByOrFail(InvoiceEntity, { id: inv.id });
  t.is(row.status, 'expired');
});
