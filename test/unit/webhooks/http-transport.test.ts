import test from 'ava';
import { TargetGuard } from '../../../src/shared/target-guard';
import { signedPost, WEBHOOK_USER_AGENT } from '../../../src/webhooks/delivery-signer';
import { DELIVERY_TIMEOUT_MS, HttpTransport } from '../../../src/webhooks/http-transport';

// Every case here is refused before any connection is tried: no I/O happens.
const noDns = () => Promise.reject(new Error('no DNS in unit tests'));
const transport = new HttpTransport(new TargetGuard({ allowPrivate: false, resolve: noDns }));
const event = { id: '00000000-0000-4000-8000-000000000000', type: 'ping', body: '{}' };
const now = new Date('2026-03-01T00:00:00Z');

test('the receiver has 10 seconds, and deliveries say who sends them', (t) => {
  t.is(DELIVERY_TIMEOUT_MS, 10_000);
  t.is(WEBHOOK_USER_AGENT, 'Service-Webhooks/1.0');
  t.is(signedPost('https://merchant.example/hook', event, 'secret', now).headers['User-Agent'], WEBHOOK_USER_AGENT);
});

test('without allow_private_targets, http and non-public IP literals are refused at the attempt, naming only the class', async (t) => {
  const cases: Array<[string, string]> = [
    ['http://example.com/hook', 'target refused: only https:// targets are allowed'],
    ['https://127.0.0.1/hook', 'target refused: the host is a loopback address'],
    ['https://10.0.0.1/hook', 'target refused: the host is a private address'],
    ['https://169.254.169.254/latest', 'target refused: the host is a cloud metadata address'],
    ['https://[::ffff:192.168.0.1]/hook', 'target refused: the host is a private address (IPv4-mapped)'],
    ['https://[fe80::1]/hook', 'target refused: the host is a link-local address'],
  ];
  for (const [url, error] of cases) {
    const r = await transport.post(signedPost(url, event, 'secret', now));
    t.like(r, { ok: false, responseStatus: null, error }, url);
  }
  t.is((await transport.post(signedPost('not a url', event, 'secret', now))).error, 'the URL is not valid');
});
