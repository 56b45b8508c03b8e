import test from 'ava';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../../../src/webhooks/verify';
import { signatureValid } from '../../helpers/webhook-verifier';
import { readSharedVectors } from '../../helpers/vectors';

interface Case {
  name: string;
  timestamp: string;
  body: string;
  signature: string;
  valid: boolean;
}

const vectors = readSharedVectors<{ secret: string; cases: Case[] }>('webhook-signing.json');

test('the webhook vectors file is loaded with valid and invalid cases', (t) => {
  t.true(vectors.cases.some((c) => c.valid));
  t.true(vectors.cases.filter((c) => !c.valid).length >= 6);
});

for (const c of vectors.cases) {
  const headers = { 'x-timestamp': c.timestamp, 'x-signature': c.signature };
  test(`vector ${c.name}: verifyWebhook ${c.valid ? 'accepts' : 'rejects'} it`, (t) => {
    const now = Number(c.timestamp);
    if (c.valid) {
      const event = verifyWebhook(c.body, headers, vectors.secret, { now });
      t.is(event.event_id, JSON.parse(c.body).event_id);
    } else {
      const err = t.throws(() => verifyWebhook(c.body, headers, vectors.secret, { now }), { instanceOf: WebhookVerificationError });
      t.is(err!.reason, 'invalid_signature');
    }
  });
  test(`vector ${c.name}: the test helpers' independent verifier agrees`, (t) => {
    t.is(signatureValid(vectors.secret, c.timestamp, c.body, c.signature), c.valid);
  });
  if (c.valid) {
    test(`vector ${c.name}: signWebhook produces the published signature`, (t) => {
      t.is(signWebhook(vectors.secret, c.timestamp, c.body), c.signature);
      t.is(signWebhook(vectors.secret, Number(c.timestamp), Buffer.from(c.body, 'utf8')), c.signature);
    });
  }
}

const valid = vectors.cases.find((c) => c.valid)!;
const validHeaders = { 'X-Timestamp': valid.timestamp, 'X-Signature': valid.signature };

test('verifyWebhook rejects a timestamp outside the tolerance, either way, and accepts the edge', (t) => {
  const ts = Number(valid.timestamp);
  t.notThrows(() => verifyWebhook(valid.body, validHeaders, vectors.secret, { now: ts + 300 }));
  t.notThrows(() => verifyWebhook(valid.body, validHeaders, vectors.secret, { now: ts - 300 }));
  for (const now of [ts + 301, ts - 301]) {
    const err = t.throws(() => verifyWebhook(valid.body, validHeaders, vectors.secret, { now }), { instanceOf: WebhookVerificationError });
    t.is(err!.reason, 'timestamp_outside_tolerance');
  }
  t.notThrows(() => verifyWebhook(valid.body, validHeaders, vectors.secret, { now: ts + 3000, toleranceSeconds: 3600 }));
});

test('verifyWebhook uses the system clock by default, so an old vector is outside the tolerance', (t) => {
  const err = t.throws(() => verifyWebhook(valid.body, validHeaders, vectors.secret), { instanceOf: WebhookVerificationError });
  t.is(err!.reason, 'timestamp_outside_tolerance');
  const now = String(Math.floor(Date.now() / 1000));
  const fresh = { 'X-Timestamp': now, 'X-Signature': signWebhook(vectors.secret, now, valid.body) };
  t.notThrows(() => verifyWebhook(valid.body, fresh, vectors.secret));
});

test('verifyWebhook reads Fetch Headers, Node header objects and raw bytes', (t) => {
  const now = Number(valid.timestamp);
  const fetchHeaders = new Headers(validHeaders);
  t.is(verifyWebhook(Buffer.from(valid.body), fetchHeaders, vectors.secret, { now }).type, 'invoice.paid');
  t.is(
    verifyWebhook(new TextEncoder().encode(valid.body), { 'x-timestamp': [valid.timestamp], 'x-signature': valid.signature }, vectors.secret, { now }).type,
    'invoice.paid',
  );
});

test('verifyWebhook rejects missing headers, repeated headers and a non-decimal timestamp', (t) => {
  const now = Number(valid.timestamp);
  const reason = (headers: Record<string, string | string[]>) =>
    t.throws(() => verifyWebhook(valid.body, headers, vectors.secret, { now }), { instanceOf: WebhookVerificationError })!.reason;
  t.is(reason({ 'X-Signature': valid.signature }), 'missing_header');
  t.is(reason({ 'X-Timestamp': valid.timestamp }), 'missing_header');
  t.is(reason({ 'X-Timestamp': valid.timestamp, 'X-Signature': [valid.signature, valid.signature] }), 'missing_header');
  t.is(reason({ 'X-Timestamp': `${valid.timestamp}.0`, 'X-Signature': valid.signature }), 'invalid_timestamp');
  t.is(reason({ 'X-Timestamp': '1767225610000', 'X-Signature': valid.signature }), 'invalid_timestamp');
});
