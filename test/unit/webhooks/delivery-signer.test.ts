import test from 'ava';
import type { Claimed } from '../../../src/webhooks/attempt.store';
import type { CallbackSecrets } from '../../../src/webhooks/callback-secret';
import { DeliverySigner, signedPost } from '../../../src/webhooks/delivery-signer';
import type { WebhookSecrets } from '../../../src/webhooks/secrets';
import { signatureValid } from '../../helpers/webhook-verifier';

const now = new Date('2026-03-01T00:00:07.900Z');
const body = '{"event_id":"00000000-0000-4000-8000-000000000001","type":"invoice.paid"}';

const claimed = (endpointId: string | null): Claimed =>
  ({
    delivery: {
      id: 'delivery',
      account_id: 'account-1',
      event_id: '00000000-0000-4000-8000-000000000001',
      event_type: 'invoice.paid',
      endpoint_id: endpointId,
      url: endpointId ? 'https://shop.example/endpoint' : 'https://shop.example/invoice-hook',
    },
    sealedSecret: endpointId ? 'sealed' : null,
    body,
  }) as unknown as Claimed;

const signer = new DeliverySigner({
  secrets: { openEndpoint: (id: string, sealed: string) => `endpoint-secret:${id}:${sealed}` } as unknown as WebhookSecrets,
  callbackSecrets: { secretFor: async (account: string) => `callback-secret:${account}` } as unknown as CallbackSecrets,
});

test('a delivery is sent with the headers of SPEC "Events", the body as stored and a signature a receiver verifies', (t) => {
  const post = signedPost('https://shop.example/hook', { id: 'event-1', type: 'invoice.paid', body }, 'whsec_test', now);
  t.is(post.body, body);
  t.like(post.headers, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'User-Agent': 'Service-Webhooks/1.0',
    'X-Event-Id': 'event-1',
    'X-Event-Type': 'invoice.paid',
    'X-Timestamp': '1772323207',
  });
  t.true(signatureValid('whsec_test', post.headers['X-Timestamp']!, body, post.headers['X-Signature']!));
});

test("an endpoint's delivery is signed with the endpoint's secret, an invoice webhook_url's with the account's callback secret", async (t) => {
  const toEndpoint = await signer.sign(claimed('endpoint-1'), now);
  t.true(signatureValid('endpoint-secret:endpoint-1:sealed', toEndpoint.headers['X-Timestamp']!, body, toEndpoint.headers['X-Signature']!));
  t.like(toEndpoint, { url: 'https://shop.example/endpoint', target: 'endpoint-1', account: 'account-1' });

  const toInvoiceUrl = await signer.sign(claimed(null), now);
  t.true(signatureValid('callback-secret:account-1', toInvoiceUrl.headers['X-Timestamp']!, body, toInvoiceUrl.headers['X-Signature']!));
  t.like(toInvoiceUrl, { url: 'https://shop.example/invoice-hook', target: 'url:https://shop.example/invoice-hook', account: 'account-1' });
});
