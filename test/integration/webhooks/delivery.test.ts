import test from 'ava';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { WebhookDeliveryEntity, WebhookEndpointEntity } from '../../../src/db/entities/webhooks';
import { merchantWithKey } from '../../helpers/daemon';
import { ApiClient, TEST_CHAINS } from '../../helpers/invoice-fixture';
import { until } from '../../helpers/cli';
import { deliveryProblems } from '../../helpers/webhook-verifier';
import { verifyWebhook } from '../../../src/webhooks/verify';
import { startWebhookFixture, type WebhookFixture } from '../../helpers/webhook-fixture';

let f: WebhookFixture;
test.before(async () => {
  f = await startWebhookFixture({ overrides: { chains: TEST_CHAINS }, daemon: { webhooks: { timeoutMs: 3000 } } });
});
test.after.always(async () => {
  await f?.stop();
});

const MINUTE = 60_000;

test.serial('a delivery carries every SPEC header and a signature an independent verifier accepts, over the body as stored', async (t) => {
  const ep = await f.endpoint('/all', { secret: 'receiver secret with spaces & punctuation!' });
  const eventId = await f.emit('deposit.confirmed', { address: { id: 'a1', label: 'x' }, deposit: { amount: '1.5', net_amount: '1.49', status: 'confirmed' } });
  const d = await f.settled(eventId, ep.id, 'succeeded');
  const [req] = await f.sink.waitFor('/all', 1);
  t.deepEqual(deliveryProblems(req!, ep.secret, { nowSeconds: Date.now() / 1000 }), []);
  // What docs/webhooks.md tells merchants to run accepts it too.
  t.is(verifyWebhook(req!.body, req!.headers, ep.secret).event_id, eventId);
  t.is(req!.headers['x-event-id'], eventId);
  t.is(req!.headers['x-event-type'], 'deposit.confirmed');
  const stored = (await f.td.daemon.store.read.query('SELECT body FROM events WHERE id = ?', [eventId]))[0].body as string;
  t.is(req!.body.toString('utf8'), stored);
  t.like(JSON.parse(stored), { event_id: eventId, type: 'deposit.confirmed', data: { deposit: { amount: '1.5' } } });

  const log = await f.api.get(`/v1/webhooks/deliveries/${d.id}`);
  t.is(log.status, 200);
  t.like(log.body, {
    id: d.id,
    event_id: eventId,
    event_type: 'deposit.confirmed',
    endpoint_id: ep.id,
    url: ep.url,
    status: 'succeeded',
    attempts: 1,
    next_attempt_at: null,
    last_response_status: 200,
    last_error: null,
  });
  t.is(log.body.attempt_log.length, 1);
  t.like(log.body.attempt_log[0], { number: 1, url: ep.url, response_status: 200, error: null });
  t.true(typeof log.body.attempt_log[0].duration_ms === 'number');
});

test.serial('an endpoint gets only the types it subscribed to; "*" gets them all; a ping goes only to the endpoint it names', async (t) => {
  const some = await f.endpoint('/some', { types: ['invoice.paid', 'withdrawal.completed'] });
  const every = await f.endpoint('/every', { types: ['*'] });
  const paid = await f.emit('invoice.paid', { invoice: { id: 'i1' } });
  const archived = await f.emit('static_address.archived', { address: { id: 'a2' } });
  await f.settled(paid, some.id, 'succeeded');
  await f.settled(paid, every.id, 'succeeded');
  await f.settled(archived, every.id, 'succeeded');
  t.deepEqual((await f.deliveries({ event_id: archived, endpoint_id: some.id })).length, 0);
  t.deepEqual(
    f.sink.at('/some').map((r) => r.headers['x-event-type']),
    ['invoice.paid'],
  );

  const ping = await f.td.daemon.webhooks.deliveries.ping(f.accountId, some.id, 'hello');
  await f.settled(ping.event_id, some.id, 'succeeded');
  t.deepEqual(
    (await f.deliveries({ event_id: ping.event_id })).map((d) => d.endpoint_id),
    [some.id],
  );
  const req = f.sink.at('/some').find((r) => r.headers['x-event-type'] === 'ping')!;
  t.deepEqual(deliveryProblems(req, some.secret), []);
  t.deepEqual(JSON.parse(req.body.toString()).data, { endpoint_id: some.id, message: 'hello' });
  t.false(f.sink.at('/every').some((r) => r.headers['x-event-type'] === 'ping'));
});

test.serial("an invoice's own webhook_url gets its invoice.* events, signed with the account's invoice-callback secret", async (t) => {
  const url = f.sink.url('/invoice-callback');
  const created = await f.api.post('/v1/invoices', { amount: '10', currency: 'USD', webhook_url: url });
  t.is(created.status, 201);
  await f.td.daemon.store.write((em) => em.update(InvoiceEntity, { id: created.body.id }, { ttl_expires_at: new Date(Date.now() - MINUTE).toISOString() }));
  await f.td.daemon.invoices.service.expireDue();
  const [req] = await f.sink.waitFor('/invoice-callback', 1);
  const { secret } = await f.td.daemon.webhooks.callbackSecrets.show(f.accountId, false);
  t.deepEqual(deliveryProblems(req!, secret), []);
  t.is(req!.headers['x-event-type'], 'invoice.expired');
  t.is(JSON.parse(req!.body.toString()).data.invoice.id, created.body.id);
  const d = (await f.deliveries({ event_id: String(req!.headers['x-event-id']) })).find((x) => x.endpoint_id === null);
  t.is(d!.url, url);
  await f.settled(d!.event_id, null, 'succeeded');
});

const failures: Array<[string, 'redirect' | 'close' | 'hang' | number, number | null, RegExp]> = [
  ['a 500', 500, 500, /answered 500/],
  ['a 404', 404, 404, /answered 404/],
  ['a redirect, which is not followed', 'redirect', 302, /redirects are not followed/],
  ['a closed connection', 'close', null, /closed before an answer/],
  ['no answer within the timeout', 'hang', null, /timeout/],
];
for (const [what, behaviour, status, error] of failures) {
  test.serial(`${what} is a failed attempt, and the next one is planned a minute later`, async (t) => {
    const path = `/fail-${String(behaviour)}`;
    const ep = await f.endpoint(path, { behaviour });
    const before = Date.now();
    const eventId = await f.emit('withdrawal.failed', { withdrawal: { id: 'w1' } });
    const d = await f.settled(eventId, ep.id, 'failed');
    t.is(d.attempts, 1);
    t.is(d.last_response_status, status);
    t.regex(d.last_error!, error);
    // Planned a minute after the failed attempt ended (the moment it was recorded).
    t.is(Date.parse(d.next_attempt_at!) - Date.parse(d.updated_at), MINUTE);
    t.true(Date.parse(d.updated_at) >= before);
    t.is(f.sink.at(path).length, 1);
    t.is(f.sink.at(`${path}/followed`).length, 0);
  });
}

test.serial(
  'a 2xx with a long body succeeds at its status; the connection is closed past 64 KiB of it and the next delivery goes out on a new one',
  async (t) => {
    const ep = await f.endpoint('/long', { behaviour: 'long' });
    const first = await f.emit('deposit.confirmed', { deposit: { amount: '1' } });
    t.like(await f.settled(first, ep.id, 'succeeded'), { attempts: 1, last_response_status: 200, last_error: null });
    const second = await f.emit('deposit.confirmed', { deposit: { amount: '2' } });
    t.like(await f.settled(second, ep.id, 'succeeded'), { attempts: 1, last_response_status: 200, last_error: null });
    const [a, b] = f.sink.at('/long');
    t.truthy(a && b);
    t.not(a!.remotePort, b!.remotePort, 'the second delivery came on a new connection');
  },
);

test.serial('retry resends a failed delivery now; retry of a pending one is 409 conflict and changes nothing', async (t) => {
  const ep = await f.endpoint('/flaky', { behaviour: 503 });
  const eventId = await f.emit('invoice.paid', { invoice: { id: 'i9' } });
  const failed = await f.settled(eventId, ep.id, 'failed');
  f.sink.set('/flaky', 'hang');
  const retried = await f.api.post(`/v1/webhooks/deliveries/${failed.id}/retry`, {});
  t.is(retried.status, 200);
  t.like(retried.body, { id: failed.id, status: 'pending' });
  await f.sink.waitFor('/flaky', 2);
  // In flight (the receiver hangs): still pending.
  const pending = await f.td.daemon.store.read.findOneByOrFail(WebhookDeliveryEntity, { id: failed.id });
  t.is(pending.status, 'pending');
  const again = await f.api.post(`/v1/webhooks/deliveries/${failed.id}/retry`, {});
  t.is(again.status, 409);
  t.is(again.body.error.code, 'conflict');
  t.deepEqual(again.body.error.details, { reason: 'delivery_pending' });
  t.deepEqual(await f.td.daemon.store.read.findOneByOrFail(WebhookDeliveryEntity, { id: failed.id }), pending);
  f.sink.set('/flaky', 'ok');
  const timedOut = await f.settled(eventId, ep.id, 'failed');
  t.is(timedOut.attempts, 2);
  t.regex(timedOut.last_error!, /timeout/);
  t.is((await f.api.post(`/v1/webhooks/deliveries/${failed.id}/retry`, {})).status, 200);
  const ok = await f.settled(eventId, ep.id, 'succeeded');
  t.is(ok.attempts, 3);
  t.is((await f.api.get(`/v1/webhooks/deliveries/${failed.id}`)).body.attempt_log.length, 3);
});

test.serial('one slow endpoint never delays the others: its attempts in flight are bounded', async (t) => {
  const slow = await f.endpoint('/slow', { behaviour: 'hang', types: ['deposit.pending'] });
  const quick = await f.endpoint('/quick', { types: ['deposit.pending'] });
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await f.emit('deposit.pending', { n: i }));
  await f.sink.waitFor('/quick', 20);
  const slowOnes = await f.deliveries({ endpoint_id: slow.id });
  t.true(
    slowOnes.every((d) => d.status === 'pending'),
    'the quick endpoint got everything while the slow one had not answered once',
  );
  await f.sink.waitFor('/slow', 8);
  // One more event, through to the quick endpoint: the passes that sent it would have sent a ninth to /slow.
  await f.emit('deposit.pending', { n: 20 });
  await f.sink.waitFor('/quick', 21);
  t.is(f.sink.at('/slow').length, 8, 'attempts in flight to one endpoint are bounded');
  for (const id of ids) await f.settled(id, quick.id, 'succeeded');
  await f.td.daemon.store.write((em) => em.update(WebhookEndpointEntity, { id: slow.id }, { enabled: false }));
});

test.serial('attempts claimed ahead for an endpoint never go out with its old URL after a change', async (t) => {
  const ep = await f.endpoint('/moving-old', { behaviour: 'hang', types: ['deposit.reverted'] });
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await f.emit('deposit.reverted', { n: i }));
  await f.sink.waitFor('/moving-old', 8);
  const moved = await f.api.call('PATCH', `/v1/webhooks/endpoints/${ep.id}`, { url: f.sink.url('/moving-new') });
  t.is(moved.status, 200);
  f.sink.release();
  await f.sink.waitFor('/moving-new', 12);
  t.is(f.sink.at('/moving-old').length, 8);
  for (const r of f.sink.at('/moving-new')) t.deepEqual(deliveryProblems(r, ep.secret), []);
  const settled = await until(async () => {
    const rows = await f.deliveries({ endpoint_id: ep.id });
    return rows.every((d) => d.status !== 'pending') ? rows : null;
  });
  t.deepEqual(settled.map((d) => d.status).sort(), [...Array(12).fill('succeeded'), ...Array(8).fill('failed')].sort());
  t.true(
    settled.every((d) => d.attempts === 1),
    'a claim given back is not counted',
  );
});

test.serial('the delivery log filters by status, event_type, endpoint_id and time, in keyset pages', async (t) => {
  // Only this test's endpoints take part.
  await f.td.daemon.store.write((em) => em.update(WebhookEndpointEntity, { enabled: true }, { enabled: false }));
  const a = await f.endpoint('/log-a', { types: ['static_address.restored'] });
  const b = await f.endpoint('/log-b', { behaviour: 500, types: ['static_address.restored'] });
  const t0 = new Date().toISOString();
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await f.emit('static_address.restored', { reason: 'deposit', n: i }));
  for (const id of ids) {
    await f.settled(id, a.id, 'succeeded');
    await f.settled(id, b.id, 'failed');
  }
  const byEndpoint = await f.api.get(`/v1/webhooks/deliveries?endpoint_id=${a.id}&limit=2`);
  t.is(byEndpoint.status, 200);
  t.is(byEndpoint.body.items.length, 2);
  const next = await f.api.get(`/v1/webhooks/deliveries?endpoint_id=${a.id}&limit=2&cursor=${byEndpoint.body.next_cursor}`);
  t.is(next.body.items.length, 1);
  t.is(next.body.next_cursor, null);
  const all = [...byEndpoint.body.items, ...next.body.items];
  t.deepEqual(all.map((d: { event_id: string }) => d.event_id).sort(), [...ids].sort());
  const failedOnes = await f.api.get(`/v1/webhooks/deliveries?status=failed&event_type=static_address.restored&from=${encodeURIComponent(t0)}`);
  t.deepEqual(
    failedOnes.body.items.map((d: { endpoint_id: string }) => d.endpoint_id),
    [b.id, b.id, b.id],
  );
  const none = await f.api.get(`/v1/webhooks/deliveries?event_type=static_address.restored&to=${encodeURIComponent(t0)}`);
  t.deepEqual(none.body.items, []);

  for (const [query, field] of [
    ['status=bogus', 'status'],
    ['event_type=invoice.exploded', 'event_type'],
    ['endpoint_id=nope', 'endpoint_id'],
    ['from=yesterday', 'from'],
    ['limit=0', 'limit'],
  ]) {
    const res = await f.api.get(`/v1/webhooks/deliveries?${query}`);
    t.is(res.status, 400, query);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, field);
  }
});

test.serial("another account's delivery is not_found for read and retry; a read-only key cannot retry", async (t) => {
  const ep = await f.endpoint('/mine', { behaviour: 500, types: ['withdrawal.rejected'] });
  const eventId = await f.emit('withdrawal.rejected', { withdrawal: { id: 'w2' } });
  const d = await f.settled(eventId, ep.id, 'failed');
  const o = await merchantWithKey(f.td.daemon);
  const other = new ApiClient(f.td.url, o.keyId, o.secret);
  const before = await f.td.daemon.store.read.findOneByOrFail(WebhookDeliveryEntity, { id: d.id });
  for (const res of [await other.get(`/v1/webhooks/deliveries/${d.id}`), await other.post(`/v1/webhooks/deliveries/${d.id}/retry`, {})]) {
    t.is(res.status, 404);
    t.is(res.body.error.code, 'not_found');
    t.deepEqual(res.body.error.details, {});
  }
  t.deepEqual((await other.get('/v1/webhooks/deliveries')).body.items, []);
  const reader = await f.td.daemon.keys.create(
    f.accountId,
    { email: (await f.td.daemon.team.showAccount(f.accountId)).members[0].email },
    {
      name: 'reader',
      permissions: ['read'],
      ip_whitelist: [],
      rate_limit_per_minute: 600,
      test: false,
    },
  );
  const readOnly = new ApiClient(f.td.url, reader.key.key_id, reader.key.secret);
  t.is((await readOnly.get(`/v1/webhooks/deliveries/${d.id}`)).status, 200);
  const denied = await readOnly.post(`/v1/webhooks/deliveries/${d.id}/retry`, {});
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'auth.permission_denied');
  t.deepEqual(denied.body.error.details, { required: 'create_invoice' });
  t.deepEqual(await f.td.daemon.store.read.findOneByOrFail(WebhookDeliveryEntity, { id: d.id }), before);
});
