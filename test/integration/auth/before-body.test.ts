import test from 'ava';
import net from 'node:net';
import { call, freshSourceIp, SignedClient } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';

/**
 * Issue 14 §4: no work before authentication. A blocked address and a request without the
 * signature headers are answered before the body is read (the test sends only the start of a
 * 1 MiB body and gets its answer); a body that would not parse is refused as an authentication
 * failure when the request is not validly signed; JSON nesting is bounded.
 */

const MiB = 1024 * 1024;
let d: TestDaemon;

test.before(async () => {
  d = await startTestDaemon();
});
test.after.always(async () => {
  await d?.stop();
});

/** Announces a 1 MiB body, sends 4 bytes of it and resolves with the answer's status line; never sends the rest. */
function announceAndStall(target: string, from: string, headers: Record<string, string> = {}): Promise<string> {
  const url = new URL(d.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port), localAddress: from });
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer while the body was still being sent'));
    }, 5000);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      const line = answer.split('\r\n')[0]!;
      if (answer.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(line);
      }
    });
    socket.on('error', reject);
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`POST ${target} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n${extra}\r\n[[[[`);
  });
}

test('a request without the signature headers is answered 401 auth.missing_header before its body is read', async (t) => {
  t.regex(await announceAndStall('/v1/invoices', freshSourceIp()), /^HTTP\/1\.1 401 /);
  t.regex(await announceAndStall('/v1/webhooks/endpoints', freshSourceIp(), { 'X-API-Key': 'ck_live_x', 'X-Timestamp': '1' }), /^HTTP\/1\.1 401 /);
});

test('a blocked address is answered 429 before its body is read', async (t) => {
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const from = freshSourceIp();
  for (let i = 0; i < 20; i++) t.is((await client.get('/v1/account/api-keys', { from, secret: 'w'.repeat(43) })).status, 401);
  const headers = client.headers('POST', '/v1/invoices', '[[[[');
  t.regex(await announceAndStall('/v1/invoices', from, headers), /^HTTP\/1\.1 429 /);
});

test('a body that does not parse, sent without a valid signature, is 401 and counts towards blocking the address', async (t) => {
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const from = freshSourceIp();
  const post = (secret?: string) =>
    client.request('POST', '/v1/invoices', { body: '{"amount": [[[', from, secret, headers: { 'Content-Type': 'application/json' } });
  for (let i = 0; i < 20; i++) {
    const res = await post('x'.repeat(43));
    t.is(res.status, 401, res.text);
    t.is(res.json.error.code, 'auth.invalid_signature');
  }
  const blocked = await post();
  t.is(blocked.status, 429, blocked.text);
  t.is(blocked.json.error.details.scope, 'ip');
});

test('a validly signed body nested deeper than 32 levels is 400 validation_error on body and creates nothing', async (t) => {
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const from = freshSourceIp();
  const json = { headers: { 'Content-Type': 'application/json' }, from };
  const nest = (depth: number) =>
    `{"url":"http://127.0.0.1:9/h","event_types":["invoice.paid"],"description":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  const deep = await client.post('/v1/webhooks/endpoints', nest(33), json);
  t.is(deep.status, 400, deep.text);
  t.like(deep.json.error, { code: 'validation_error', details: { field: 'body' } });
  const huge = '['.repeat(MiB / 2) + ']'.repeat(MiB / 2);
  const started = Date.now();
  const hugeRes = await client.post('/v1/webhooks/endpoints', huge, json);
  t.like(hugeRes.json.error, { code: 'validation_error', details: { field: 'body' } });
  t.log(`1 MiB of nested arrays answered in ${Date.now() - started} ms`);
  // 32 levels parse (the description is then refused for its type, not for its depth).
  const deepest = await client.post('/v1/webhooks/endpoints', nest(32), json);
  t.not(deepest.json.error.details.field, 'body', deepest.text);
  const list = await client.get('/v1/webhooks/endpoints', { from });
  t.is(list.json.items.length, 0);
  // Strings may hold brackets freely.
  const inString = await client.post(
    '/v1/webhooks/endpoints',
    JSON.stringify({ url: 'http://127.0.0.1:9/h', event_types: ['invoice.paid'], description: '['.repeat(100) }),
    json,
  );
  t.is(inString.status, 201, inString.text);
  t.is((await call(d.url, '/healthz')).status, 200);
});
