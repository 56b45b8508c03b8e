import test from 'ava';
import { createHash, createHmac } from 'node:crypto';
import { Hmac, macKey } from '../../../src/auth/hmac';
import { bodySha256, canonicalString, checkTimestamp, sign, signatureMatches } from '../../../src/auth/signature';

const hmac = new Hmac();

import * as signer from '../../helpers/signer';
import { readSharedVectors } from '../../helpers/vectors';

interface Vector {
  name: string;
  key_id: string;
  secret: string;
  method: string;
  target: string;
  timestamp: string;
  body: string;
  body_sha256: string;
  canonical: string;
  signature: string;
}

const vectors: Vector[] = readSharedVectors<{ vectors: Vector[] }>('request-signing.json').vectors;

test('vectors file is loaded and covers POST, GET with query, PUT, DELETE', (t) => {
  const methods = new Set(vectors.map((v) => v.method));
  for (const m of ['POST', 'GET', 'PUT', 'DELETE']) t.true(methods.has(m), m);
  t.true(vectors.some((v) => v.target.includes('?')));
});

for (const v of vectors) {
  const body = Buffer.from(v.body, 'utf8');

  test(`vector ${v.name}: src/auth/signature`, (t) => {
    t.is(bodySha256(body), v.body_sha256);
    const canonical = canonicalString(v.timestamp, v.method, v.target, body);
    t.is(canonical, v.canonical);
    t.is(sign(v.secret, canonical), v.signature);
    t.true(signatureMatches(v.secret, canonical, v.signature));
  });

  test(`vector ${v.name}: test/helpers/signer`, (t) => {
    t.is(signer.bodyHash(v.body), v.body_sha256);
    t.is(signer.bodyHash(body), v.body_sha256);
    t.is(signer.canonical(v.timestamp, v.method, v.target, v.body), v.canonical);
    const headers = signer.signRequest({
      keyId: v.key_id,
      secret: v.secret,
      method: v.method,
      target: v.target,
      body: v.body,
      timestamp: v.timestamp,
    });
    t.is(headers['X-API-Key'], v.key_id);
    t.is(headers['X-Timestamp'], v.timestamp);
    t.is(headers['X-Signature'], v.signature);
    if (v.body.length > 0) t.is(headers['Content-Type'], 'application/json');
    else t.false('Content-Type' in headers);
    // The server side accepts what the independent signer produced.
    t.true(signatureMatches(v.secret, v.canonical, headers['X-Signature']!));
  });

  test(`vector ${v.name}: mismatches are refused`, (t) => {
    const canonical = v.canonical;
    t.false(signatureMatches(v.secret, canonical, v.signature.toUpperCase()), 'upper-case hex');
    t.false(signatureMatches(v.secret, canonical, v.signature.slice(0, 63)), 'too short');
    t.false(signatureMatches(v.secret, canonical, v.signature + '0'), 'too long');
    t.false(signatureMatches(v.secret, canonical, ''), 'empty');
    t.false(signatureMatches(v.secret, canonical, ` ${v.signature.slice(1)}`), 'non-hex char');
    const flipped = (v.signature[0] === '0' ? '1' : '0') + v.signature.slice(1);
    t.false(signatureMatches(v.secret, canonical, flipped), 'one nibble changed');
    const changedBody = canonicalString(v.timestamp, v.method, v.target, Buffer.from(v.body + ' ', 'utf8'));
    t.not(changedBody, canonical);
    t.false(signatureMatches(v.secret, changedBody, v.signature), 'changed body');
    t.false(signatureMatches(v.secret + 'x', canonical, v.signature), 'other secret');
    t.false(signatureMatches(Buffer.from(v.secret, 'base64url').toString('latin1'), canonical, v.signature), 'base64-decoded secret');
    const otherTs = String(Number(v.timestamp) + 1);
    t.false(signatureMatches(v.secret, canonicalString(otherTs, v.method, v.target, body), v.signature), 'changed timestamp');
  });
}

test('canonical string has four lines and no trailing newline; empty body hashes the empty string', (t) => {
  const c = canonicalString('1767225600', 'get', '/v1/balances', Buffer.alloc(0));
  t.deepEqual(c.split('\n'), ['1767225600', 'GET', '/v1/balances', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855']);
  t.false(c.endsWith('\n'));
});

test('target percent-encoding is kept exactly as sent', (t) => {
  const a = canonicalString('1', 'GET', '/v1/invoices?created_from=2026-01-01T00%3A00%3A00Z', Buffer.alloc(0));
  const b = canonicalString('1', 'GET', '/v1/invoices?created_from=2026-01-01T00:00:00Z', Buffer.alloc(0));
  t.not(a, b);
  t.not(sign('s', a), sign('s', b));
});

test('signRequest defaults the timestamp to the current Unix seconds', (t) => {
  const before = Math.floor(Date.now() / 1000);
  const h = signer.signRequest({ keyId: 'k', secret: 's', method: 'GET', target: '/v1/balances' });
  const after = Math.floor(Date.now() / 1000);
  const ts = Number(h['X-Timestamp']);
  t.true(/^\d+$/.test(h['X-Timestamp']!));
  t.true(ts >= before && ts <= after);
  t.is(h['X-Signature'], sign('s', canonicalString(h['X-Timestamp']!, 'GET', '/v1/balances', Buffer.alloc(0))));
});

test('checkTimestamp: integer seconds within 300 s', (t) => {
  const now = 1_767_225_600_000;
  t.deepEqual(checkTimestamp('1767225600', now), { ok: true, seconds: 1767225600 });
  t.deepEqual(checkTimestamp('1767225300', now), { ok: true, seconds: 1767225300 });
  t.deepEqual(checkTimestamp('1767225900', now), { ok: true, seconds: 1767225900 });
  t.deepEqual(checkTimestamp('1767225299', now), { ok: false, code: 'auth.expired_timestamp', serverTime: 1767225600 });
  t.deepEqual(checkTimestamp('1767225901', now), { ok: false, code: 'auth.expired_timestamp', serverTime: 1767225600 });
  // milliseconds are an integer but far from now
  t.like(checkTimestamp('1767225600000', now), { ok: false, code: 'auth.expired_timestamp' });
  for (const bad of ['', 'abc', '1767225600.5', '1e9', ' 1767225600', '+1767225600', '0x10', '1767225600 ']) {
    t.deepEqual(checkTimestamp(bad, now), { ok: false, code: 'auth.invalid_timestamp' }, JSON.stringify(bad));
  }
});

test('Hmac.mac is HMAC-SHA256: short, block-sized, long and non-ASCII secrets; empty, short and long messages', (t) => {
  const secrets = ['s', 'x'.repeat(43), 'y'.repeat(64), 'z'.repeat(65), 'ключ-🔑'.repeat(20)];
  const messages = ['', 'GET\n/v1/currencies\n1\nabc', 'é'.repeat(3000), 'm'.repeat(10_000)];
  for (const secret of secrets) {
    const key = macKey(secret);
    for (const message of messages) {
      t.is(hmac.mac(key, message).toString('hex'), createHmac('sha256', Buffer.from(secret, 'utf8')).update(message, 'utf8').digest('hex'));
    }
  }
});

test('Hmac.matches agrees with signatureMatches on the vectors and on bad values', (t) => {
  for (const v of vectors) {
    const key = macKey(v.secret);
    t.true(hmac.matches(key, v.canonical, v.signature), v.name);
    t.false(hmac.matches(key, v.canonical, v.signature.toUpperCase()), v.name);
    t.false(hmac.matches(macKey(v.secret + 'x'), v.canonical, v.signature), v.name);
    t.false(hmac.matches(key, v.canonical, 'zz'), v.name);
    t.false(hmac.matches(key, v.canonical, `${v.signature}0`), v.name);
    t.false(hmac.matches(key, v.canonical, v.signature.slice(0, 63)), v.name);
    // One character outside ASCII whose low byte spells the right one: not the signature.
    const last = v.signature.charCodeAt(63);
    t.false(hmac.matches(key, v.canonical, v.signature.slice(0, 63) + String.fromCharCode(0x100 + last)), v.name);
    t.false(hmac.matches(key, v.canonical, v.signature.slice(0, 63) + String.fromCharCode(0x80 + last)), v.name);
  }
});

test('Hmac.replayMark: a mark exactly when the signature matches, the same for the same request, never the signature nor its digest', (t) => {
  for (const v of vectors) {
    const key = macKey(v.secret);
    const mark = hmac.replayMark(key, v.canonical, v.signature);
    if (mark === null) return t.fail(v.name);
    t.is(hmac.replayMark(key, v.canonical, v.signature), mark, v.name);
    t.is(Buffer.from(mark, 'base64').length, 32, v.name);
    t.false(mark === v.signature || Buffer.from(mark, 'base64').toString('hex') === v.signature, v.name);
    t.not(mark, createHash('sha256').update(v.signature).digest('base64'), v.name);
    t.not(hmac.replayMark(key, `${v.canonical}x`, sign(v.secret, `${v.canonical}x`)), mark, v.name);
    t.is(hmac.replayMark(key, v.canonical, v.signature.toUpperCase()), null, v.name);
    t.is(hmac.replayMark(macKey(v.secret + 'x'), v.canonical, v.signature), null, v.name);
    t.is(hmac.replayMark(key, v.canonical, 'zz'), null, v.name);
  }
});
