/**
 * The EVM node's JSON-RPC client against a local HTTP server: batches cut into POSTs of 100 with
 * answers put back in call order, credentials of the URL sent as Basic authentication, and each
 * way a request fails (HTTP status, redirect, not JSON, timeout, the caller's abort, no server) as
 * one short line without the node's URL.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EvmRpc } from '../../../../src/chains/evm/json-rpc';

interface Seen {
  path: string;
  authorization: string | undefined;
  calls: number;
}

/** A node on 127.0.0.1 whose answer to each POST `answer` decides; it records what each POST carried. */
async function node(t: { teardown(fn: () => Promise<void>): void }, answer: (body: unknown, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, calls: Array.isArray(body) ? body.length : 1 });
      answer(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (res: http.ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

/** Each call's result is its first parameter; a batch's answers come back in reverse order. */
const echo = (body: unknown, res: http.ServerResponse) => {
  const one = (c: { id: number; params: unknown[] }) => ({ jsonrpc: '2.0', id: c.id, result: c.params[0] });
  json(res, 200, Array.isArray(body) ? body.map(one).reverse() : one(body as { id: number; params: unknown[] }));
};

test('a batch goes in POSTs of at most 100 calls and its results come back in call order; a single call is one POST', async (t) => {
  const n = await node(t, echo);
  const rpc = new EvmRpc(`${n.url}/rpc/key?x=1`, 5000);
  const results = await rpc.batch<number>(Array.from({ length: 250 }, (_, i) => ({ method: 'eth_getBalance', params: [i] })));
  t.deepEqual(
    results,
    Array.from({ length: 250 }, (_, i) => i),
  );
  t.deepEqual(
    n.seen.map((s) => s.calls).sort((a, b) => a - b),
    [50, 100, 100],
  );
  t.true(n.seen.every((s) => s.path === '/rpc/key?x=1' && s.authorization === undefined));
  t.is(await rpc.call<string>('eth_chainId', ['0x1']), '0x1');
  t.is(n.seen.length, 4);
});

test('credentials in the URL travel as Basic authentication', async (t) => {
  const n = await node(t, echo);
  const rpc = new EvmRpc(n.url.replace('http://', 'http://user%40x:p%3Ass@'), 5000);
  t.is(await rpc.call<number>('eth_blockNumber', [7]), 7);
  t.is(n.seen[0]!.authorization, `Basic ${Buffer.from('user@x:p:ss').toString('base64')}`);
});

test('a node error, an HTTP error, a redirect and an answer that is not JSON each fail with one line naming the method, never the URL', async (t) => {
  const answers: Array<(res: http.ServerResponse) => void> = [
    (res) => json(res, 200, { jsonrpc: '2.0', id: 0, error: { code: -32000, message: 'header not found' } }),
    (res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('busy');
    },
    (res) => {
      res.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' });
      res.end();
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>');
    },
  ];
  let next = 0;
  const n = await node(t, (_body, res) => answers[next++]!(res));
  const rpc = new EvmRpc(`${n.url}/secret-key`, 5000);
  const messages: string[] = [];
  for (let i = 0; i < answers.length; i++) messages.push((await t.throwsAsync(rpc.call('eth_getBlockByNumber', ['latest', false])))!.message);
  t.deepEqual(messages, [
    'evm node eth_getBlockByNumber: header not found',
    'evm node eth_getBlockByNumber: HTTP 503',
    'evm node eth_getBlockByNumber: HTTP 302',
    'evm node eth_getBlockByNumber: the answer is not JSON',
  ]);
  // The redirect was not followed.
  t.is(n.seen.length, answers.length);
});

test("a node that does not answer in time is abandoned at the timeout; the caller's abort ends a request at once with its reason", async (t) => {
  const n = await node(t, () => undefined);
  const rpc = new EvmRpc(n.url, 300);
  const started = Date.now();
  const late = await t.throwsAsync(
    rpc.batch([
      { method: 'eth_getLogs', params: [] },
      { method: 'eth_getLogs', params: [] },
    ]),
  );
  t.is(late!.message, 'evm node batch of 2 (eth_getLogs...): timed out');
  t.true(Date.now() - started >= 290 && Date.now() - started < 3000, `${Date.now() - started} ms`);

  const slow = new EvmRpc(n.url, 60_000);
  const stop = new AbortController();
  const asked = Date.now();
  const pending = slow.call('eth_blockNumber', [], stop.signal);
  setTimeout(() => stop.abort(new Error('daemon stopping')), 100);
  t.is((await t.throwsAsync(pending))!.message, 'daemon stopping');
  t.true(Date.now() - asked < 3000);
  t.is((await t.throwsAsync(slow.call('eth_blockNumber', [], stop.signal)))!.message, 'daemon stopping');
});

test("a node nobody listens for is unreachable, with the reason's code", async (t) => {
  const closed = new EvmRpc('http://127.0.0.1:9/key-abc', 5000);
  const err = await t.throwsAsync(closed.call('eth_chainId', []));
  t.is(err!.message, 'evm node eth_chainId: unreachable (ECONNREFUSED)');
});
