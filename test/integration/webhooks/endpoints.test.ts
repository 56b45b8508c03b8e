import test from 'ava';
import { WebhookEndpointEntity } from '../../../src/db/entities/webhooks';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';

let td: TestDaemon;
let api: ApiClient;
let other: ApiClient;
let readOnly: ApiClient;

test.before(async () => {
  td = await startTestDaemon();
  const m = await merchantWithKey(td.daemon);
  api = new ApiClient(td.url, m.keyId, m.secret);
  const o = await merchantWithKey(td.daemon);
  other = new ApiClient(td.url, o.keyId, o.secret);
  const { keyId, secret } = await td.daemon.keys
    .create(
      m.accountId,
      { email: m.owner },
      {
        name: 'reader',
        permissions: ['read'],
        ip_whitelist: [],
        rate_limit_per_minute: 600,
        test: false,
      },
    )
    .then((r) => ({ keyId: r.key.key_id, secret: r.key.secret }));
  readOnly = new ApiClient(td.url, keyId, secret);
});
test.after.always(async () => {
  await td?.stop();
});

const ENDPOINT_FIELDS = ['id', 'url', 'event_types', 'description', 'enabled', 'secret_last4', 'created_at', 'updated_at'].sort();
const rows = () => td.daemon.store.read.find(WebhookEndpointEntity, { order: { id: 'ASC' } });

async function create(body: Record<string, unknown> = {}) {
  const res = await api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', event_types: ['invoice.paid'], ...body });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

test.serial('create takes a secret as given (spaces and punctuation) and returns it only then', async (t) => {
  const secret = 'my secret: with spaces, "quotes" & punctuation!';
  const res = await api.post('/v1/webhooks/endpoints', {
    url: 'http://127.0.0.1:9/a',
    event_types: ['invoice.paid', 'deposit.confirmed'],
    description: 'shop',
    secret,
  });
  t.is(res.status, 201);
  t.deepEqual(Object.keys(res.body).sort(), [...ENDPOINT_FIELDS, 'secret'].sort());
  t.like(res.body, {
    url: 'http://127.0.0.1:9/a',
    event_types: ['deposit.confirmed', 'invoice.paid'],
    description: 'shop',
    enabled: true,
    secret,
    secret_last4: 'ion!',
  });
  const got = await api.get(`/v1/webhooks/endpoints/${res.body.id}`);
  t.is(got.status, 200);
  t.deepEqual(Object.keys(got.body).sort(), ENDPOINT_FIELDS);
  const list = await api.get('/v1/webhooks/endpoints');
  t.true(list.body.items.some((e: { id: string; secret?: string }) => e.id === res.body.id && e.secret === undefined));
  // At rest the secret is sealed, never stored as given.
  const row = await td.daemon.store.read.findOneByOrFail(WebhookEndpointEntity, { id: res.body.id });
  t.false(row.secret_sealed.includes('quotes'));
});

test.serial('without a secret one is generated; ["*"] subscribes to everything', async (t) => {
  const e = await create({ event_types: ['*'] });
  t.regex(e.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  t.is(e.secret_last4, e.secret.slice(-4));
  t.deepEqual(e.event_types, ['*']);
});

test.serial('rotate-secret returns a new secret once; a given one is used as given', async (t) => {
  const e = await create();
  const rotated = await api.post(`/v1/webhooks/endpoints/${e.id}/rotate-secret`, {});
  t.is(rotated.status, 200);
  t.not(rotated.body.secret, e.secret);
  t.is(rotated.body.secret_last4, rotated.body.secret.slice(-4));
  const given = await api.post(`/v1/webhooks/endpoints/${e.id}/rotate-secret`, { secret: 'another secret 1234' });
  t.is(given.body.secret, 'another secret 1234');
  t.is((await api.get(`/v1/webhooks/endpoints/${e.id}`)).body.secret_last4, '1234');
});

test.serial('PATCH changes url, event_types, description and enabled', async (t) => {
  const e = await create();
  const res = await api.call('PATCH', `/v1/webhooks/endpoints/${e.id}`, {
    url: 'http://127.0.0.1:9/b',
    event_types: ['withdrawal.completed'],
    description: 'new',
    enabled: false,
  });
  t.is(res.status, 200);
  t.like(res.body, {
    id: e.id,
    url: 'http://127.0.0.1:9/b',
    event_types: ['withdrawal.completed'],
    description: 'new',
    enabled: false,
    secret_last4: e.secret_last4,
  });
  t.deepEqual((await api.get(`/v1/webhooks/endpoints/${e.id}`)).body, res.body);
});

test.serial('DELETE removes the endpoint', async (t) => {
  const e = await create();
  const res = await api.call('DELETE', `/v1/webhooks/endpoints/${e.id}`);
  t.is(res.status, 200);
  t.deepEqual(res.body, { id: e.id, deleted: true });
  t.is((await api.get(`/v1/webhooks/endpoints/${e.id}`)).status, 404);
});

const refusedCreates: Array<[string, Record<string, unknown>, string]> = [
  ['an unknown event type', { event_types: ['invoice.paid', 'invoice.exploded'] }, 'event_types'],
  ['an empty list', { event_types: [] }, 'event_types'],
  ['"*" with other types', { event_types: ['*', 'invoice.paid'] }, 'event_types'],
  ['a type twice', { event_types: ['invoice.paid', 'invoice.paid'] }, 'event_types'],
  ['event_types missing', { event_types: undefined }, 'event_types'],
  ['event_types not a list', { event_types: 'invoice.paid' }, 'event_types'],
  ['a URL that is not one', { url: 'not a url' }, 'url'],
  ['an ftp URL', { url: 'ftp://127.0.0.1/x' }, 'url'],
  ['a URL with credentials', { url: 'http://user:pw@127.0.0.1/x' }, 'url'],
  ['url missing', { url: undefined }, 'url'],
  ['a secret too short', { secret: 'short' }, 'secret'],
  ['a secret with a newline', { secret: 'line one\nline two' }, 'secret'],
  ['description not a string', { description: 5 }, 'description'],
  ['a right-to-left override in description', { description: 'refunds \u202Edlo' }, 'description'],
  ['a pop directional isolate in description', { description: 'shop\u2069' }, 'description'],
  ['enabled not a boolean', { enabled: 'yes' }, 'enabled'],
  ['an unknown field', { colour: 'blue' }, 'colour'],
];
for (const [what, patch, field] of refusedCreates) {
  test.serial(`create with ${what} is validation_error on ${field} and creates nothing`, async (t) => {
    const before = await rows();
    const body = JSON.parse(JSON.stringify({ url: 'http://127.0.0.1:9/x', event_types: ['invoice.paid'], ...patch }));
    const res = await api.post('/v1/webhooks/endpoints', body);
    t.is(res.status, 400);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, field);
    t.deepEqual(await rows(), before);
  });
}

test.serial('PATCH with a bad value or a secret is validation_error and changes nothing', async (t) => {
  const e = await create();
  for (const [body, field] of [
    [{ event_types: ['nope'] }, 'event_types'],
    [{ url: 'gopher://127.0.0.1/' }, 'url'],
    [{ secret: 'a new secret here' }, 'secret'],
    [{ description: 'new \u202Bname' }, 'description'],
  ] as const) {
    const before = await rows();
    const res = await api.call('PATCH', `/v1/webhooks/endpoints/${e.id}`, body);
    t.is(res.status, 400);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, field);
    t.deepEqual(await rows(), before);
  }
});

test.serial("another account's endpoint is not_found for read, change, rotate and delete, and stays as it was", async (t) => {
  const e = await create();
  const before = await rows();
  const answers = [
    await other.get(`/v1/webhooks/endpoints/${e.id}`),
    await other.call('PATCH', `/v1/webhooks/endpoints/${e.id}`, { enabled: false }),
    await other.post(`/v1/webhooks/endpoints/${e.id}/rotate-secret`, {}),
    await other.call('DELETE', `/v1/webhooks/endpoints/${e.id}`),
    await api.get('/v1/webhooks/endpoints/not-a-uuid'),
  ];
  for (const res of answers) {
    t.is(res.status, 404);
    t.is(res.body.error.code, 'not_found');
    t.deepEqual(res.body.error.details, {});
  }
  t.deepEqual(await rows(), before);
  t.false((await other.get('/v1/webhooks/endpoints')).body.items.some((x: { id: string }) => x.id === e.id));
});

test.serial('a read-only key lists endpoints but every change is auth.permission_denied and changes nothing', async (t) => {
  const e = await create();
  t.is((await readOnly.get('/v1/webhooks/endpoints')).status, 200);
  t.is((await readOnly.get(`/v1/webhooks/endpoints/${e.id}`)).status, 200);
  const before = await rows();
  const answers = [
    await readOnly.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/r', event_types: ['*'] }),
    await readOnly.call('PATCH', `/v1/webhooks/endpoints/${e.id}`, { enabled: false }),
    await readOnly.post(`/v1/webhooks/endpoints/${e.id}/rotate-secret`, {}),
    await readOnly.call('DELETE', `/v1/webhooks/endpoints/${e.id}`),
  ];
  for (const res of answers) {
    t.is(res.status, 403);
    t.is(res.body.error.code, 'auth.permission_denied');
    t.deepEqual(res.body.error.details, { required: 'create_invoice' });
  }
  t.deepEqual(await rows(), before);
});
