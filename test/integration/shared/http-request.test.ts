/**
 * The nodes' HTTP client (src/shared/http-request.ts), against local servers: what it sends, and
 * that every way a request can end without an answer rejects with the socket's reason (never hangs).
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { headerOf, httpRequest, HttpRequestFailed } from '../../../src/shared/http-request';

async function serve(t: { teardown(fn: () => void): void }, handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('a POST goes with its length (no chunked body), a bodiless POST with length 0; the answer keeps its status, headers and bytes', async (t) => {
  const seen: Array<{ length?: string; chunked?: string; body: string }> = [];
  const url = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      seen.push({ length: req.headers['content-length'], chunked: req.headers['transfer-encoding'], body });
      res.writeHead(202, { 'retry-after': '3', 'content-type': 'application/octet-stream' }).end(Buffer.from([0xff, 0x00, 0x41]));
    });
  });
  const res = await httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":"é"}' });
  t.is(res.status, 202);
  t.is(headerOf(res.headers, 'Retry-After'), '3');
  t.deepEqual([...res.bytes], [0xff, 0x00, 0x41]);
  await httpRequest(url, { method: 'POST' });
  t.deepEqual(seen, [
    { length: String(Buffer.byteLength('{"a":"é"}')), chunked: undefined, body: '{"a":"é"}' },
    { length: '0', chunked: undefined, body: '' },
  ]);
});

test('a redirect is the answer, not followed', async (t) => {
  let followed = 0;
  const elsewhere = await serve(t, (_req, res) => (followed++, res.end('{}')));
  const url = await serve(t, (_req, res) => res.writeHead(302, { location: elsewhere }).end());
  const res = await httpRequest(url, { method: 'POST', body: '{}' });
  t.is(res.status, 302);
  t.is(followed, 0);
});

test('refused, closed half-way through the answer, and aborted: each rejects with the socket reason as cause', async (t) => {
  const refused = await t.throwsAsync(httpRequest('http://127.0.0.1:9/', { method: 'POST', body: '{}' }), { instanceOf: HttpRequestFailed });
  t.is(refused!.cause.code, 'ECONNREFUSED');

  const halfway = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('{"partial":');
    setTimeout(() => res.socket?.destroy(), 20);
  });
  const cut = await t.throwsAsync(httpRequest(halfway, { method: 'POST', body: '{}' }), { instanceOf: HttpRequestFailed });
  t.is(cut!.cause.code, 'ECONNRESET');

  const silent = await serve(t, () => undefined);
  const started = Date.now();
  const aborted = await t.throwsAsync(httpRequest(silent, { method: 'POST', body: '{}', signal: AbortSignal.timeout(100) }), { instanceOf: HttpRequestFailed });
  t.is(aborted!.cause.name, 'AbortError');
  t.true(Date.now() - started < 5000);
});
