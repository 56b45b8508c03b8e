import test from 'ava';
import { WebhookEndpointEntity } from '../../../src/db/entities/webhooks';
import type { Resolver } from '../../../src/shared/target-guard';
import { startWebhookFixture, type WebhookFixture } from '../../helpers/webhook-fixture';

/**
 * Targets with `webhooks.allow_private_targets: false`, as in production. Names resolve through a
 * stand-in resolver (no DNS server is asked); no test here lets a connection reach a public
 * address: the only public answers are given to the check at create time.
 */
const PUBLIC = '93.184.215.14';
const names: Record<string, string[]> = {
  'public.example.test': [PUBLIC],
  'localhost.example.test': ['127.0.0.1'],
  'private.example.test': ['10.0.0.5'],
  'v6-unique-local.example.test': ['fd00::1'],
  'metadata.example.test': ['169.254.169.254'],
  'mixed.example.test': [PUBLIC, '127.0.0.1'],
  'rebind.example.test': [PUBLIC],
};
const lookups: string[] = [];
const resolve: Resolver = async (hostname) => {
  lookups.push(hostname);
  const found = names[hostname];
  if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

let f: WebhookFixture;
test.before(async () => {
  f = await startWebhookFixture({ overrides: { webhooks: { allow_private_targets: false } }, daemon: { webhooks: { resolve } } });
});
test.after.always(async () => {
  await f?.stop();
});

const rows = () => f.td.daemon.store.read.find(WebhookEndpointEntity, { order: { id: 'ASC' } });

const refused: Array<[string, string, RegExp]> = [
  ['plain http', 'http://public.example.test/hook', /https/],
  ['IPv4 loopback', 'https://127.0.0.1/hook', /loopback/],
  ['IPv4 private 10/8', 'https://10.1.2.3/hook', /private/],
  ['IPv4 private 172.16/12', 'https://172.16.0.1/hook', /private/],
  ['IPv4 private 192.168/16', 'https://192.168.1.1/hook', /private/],
  ['IPv4 link-local', 'https://169.254.1.1/hook', /link-local/],
  ['the cloud metadata address', 'https://169.254.169.254/latest', /metadata/],
  ['carrier-grade NAT', 'https://100.64.0.1/hook', /carrier-grade/],
  ['IPv4 unspecified', 'https://0.0.0.0/hook', /unspecified/],
  ['IPv4 multicast', 'https://224.0.0.1/hook', /multicast/],
  ['IPv6 loopback', 'https://[::1]/hook', /loopback/],
  ['IPv6 unspecified', 'https://[::]/hook', /unspecified/],
  ['IPv6 link-local', 'https://[fe80::1]/hook', /link-local/],
  ['IPv6 unique-local', 'https://[fc00::1]/hook', /unique-local/],
  ['IPv6 multicast', 'https://[ff02::1]/hook', /multicast/],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', /loopback/],
  ['IPv4-mapped metadata', 'https://[::ffff:a9fe:a9fe]/hook', /metadata/],
  ['the IPv6 metadata address', 'https://[fd00:ec2::254]/hook', /metadata/],
  ['a name resolving to loopback', 'https://localhost.example.test/hook', /loopback/],
  ['a name resolving to a private address', 'https://private.example.test/hook', /private/],
  ['a name resolving to an IPv6 unique-local address', 'https://v6-unique-local.example.test/hook', /unique-local/],
  ['a name resolving to the metadata address', 'https://metadata.example.test/hook', /metadata/],
  ['a name with one public and one loopback address', 'https://mixed.example.test/hook', /loopback/],
  ['a name that does not resolve', 'https://nowhere.example.test/hook', /does not resolve/],
];

for (const [what, url, reason] of refused) {
  test.serial(`create with ${what} is validation_error on url and creates nothing`, async (t) => {
    const before = await rows();
    const res = await f.api.post('/v1/webhooks/endpoints', { url, event_types: ['*'] });
    t.is(res.status, 400);
    t.is(res.body.error.code, 'validation_error');
    t.is(res.body.error.details.field, 'url');
    t.regex(res.body.error.message, reason);
    t.deepEqual(await rows(), before);
  });
}

test.serial('a public https host is accepted; PATCH to a private one is validation_error and changes nothing', async (t) => {
  const res = await f.api.post('/v1/webhooks/endpoints', { url: 'https://public.example.test/hook', event_types: ['invoice.paid'], enabled: false });
  t.is(res.status, 201);
  const before = await rows();
  const patched = await f.api.call('PATCH', `/v1/webhooks/endpoints/${res.body.id}`, { url: 'https://private.example.test/hook' });
  t.is(patched.status, 400);
  t.is(patched.body.error.code, 'validation_error');
  t.is(patched.body.error.details.field, 'url');
  t.deepEqual(await rows(), before);
});

test.serial('a name that resolves to a private address at send time (DNS rebinding) is refused at the attempt and recorded', async (t) => {
  const created = await f.api.post('/v1/webhooks/endpoints', { url: 'https://rebind.example.test/hook', event_types: ['deposit.confirmed'] });
  t.is(created.status, 201);
  names['rebind.example.test'] = ['127.0.0.1'];
  const seen = lookups.length;
  const eventId = await f.emit('deposit.confirmed', { deposit: { amount: '1' } });
  const d = await f.settled(eventId, created.body.id, 'failed');
  t.is(d.last_response_status, null);
  t.is(d.last_error, 'target refused: the host resolves to a loopback address');
  t.true(lookups.slice(seen).includes('rebind.example.test'), 'the name was resolved again for the attempt');
  const log = await f.api.get(`/v1/webhooks/deliveries/${d.id}`);
  t.like(log.body.attempt_log[0], { number: 1, response_status: null, error: 'target refused: the host resolves to a loopback address' });
  t.is(f.sink.requests.length, 0);
});

test.serial('a stored target that is no longer allowed (a private address, or http) is refused at every attempt', async (t) => {
  const viaService = async (url: string) => (await f.td.daemon.webhooks.endpoints.create(f.accountId, { url, event_types: ['withdrawal.review'] })).id;
  const loopback = await viaService(f.sink.url('/never').replace('http://', 'https://'));
  const plain = await viaService('http://public.example.test/hook');
  const eventId = await f.emit('withdrawal.review', { withdrawal: { id: 'w' } });
  t.is((await f.settled(eventId, loopback, 'failed')).last_error, 'target refused: the host is a loopback address');
  t.is((await f.settled(eventId, plain, 'failed')).last_error, 'target refused: only https:// targets are allowed');
  t.is(f.sink.requests.length, 0);
});
