/**
 * The Bitcoin JSON-RPC client against a node stand-in on 127.0.0.1: credentials go as basic auth and
 * never into an error; per-call errors of a batch stay per call; a closed kept-alive connection is
 * retried once; redirects are refused; a slow node times out.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BitcoinRpc, BitcoinRpcError } from '../../../../src/chains/btc/rpc';

type Handler = (req: http.IncomingMessage, body: any, res: http.ServerResponse) => void;

async function standIn(t: { teardown(fn: () => void): void }, handler: Handler): Promise<{ url: (auth?: string) => string; requests: number }> {
  const state = { requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests++;
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => handler(req, raw ? JSON.parse(raw) : null, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: (auth = 'user:s3cret-pass') => `http://${auth}@127.0.0.1:${port}/`,
    get requests() {
      return state.requests;
    },
  };
}

const answer = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

test('credentials go as basic auth; a batch answers each call, errors staying with their call', async (t) => {
  let authorization: string | undefined;
  const node = await standIn(t, (req, body, res) => {
    authorization = req.headers.authorization;
    answer(
      res,
      200,
      (body as Array<{ id: number; method: string }>).map((c) =>
        c.method === 'getblockcount'
          ? { id: c.id, result: 7, error: null }
          : { id: c.id, result: null, error: { code: -5, message: 'No such mempool transaction' } },
      ),
    );
  });
  const rpc = new BitcoinRpc(node.url(), 1000);
  t.is(await rpc.call<number>('getblockcount'), 7);
  t.is(authorization, `Basic ${Buffer.from('user:s3cret-pass').toString('base64')}`);
  const [ok, bad] = await rpc.batch([
    { method: 'getblockcount', params: [] },
    { method: 'getrawtransaction', params: ['00', false] },
  ]);
  t.deepEqual(ok, { ok: true, result: 7 });
  t.false(bad!.ok);
  const err = await t.throwsAsync(rpc.all([{ method: 'getrawtransaction', params: ['00', false] }]), { instanceOf: BitcoinRpcError });
  t.is(err!.message, 'bitcoin node getrawtransaction: No such mempool transaction');
  t.is((err as BitcoinRpcError).rpcCode, -5);
});

test('refused credentials, an unreachable node and a slow one fail with a line that never holds the URL or the password', async (t) => {
  const refusing = await standIn(t, (_req, _body, res) => answer(res, 401, {}));
  const e1 = await t.throwsAsync(new BitcoinRpc(refusing.url(), 1000).call('getblockcount'));
  t.is(e1!.message, 'bitcoin node getblockcount: HTTP 401: the node refused the RPC credentials');

  const e2 = await t.throwsAsync(new BitcoinRpc('http://user:s3cret-pass@127.0.0.1:9/', 1000).call('getblockcount'));
  t.regex(e2!.message, /^bitcoin node getblockcount: request failed/);

  const slow = await standIn(t, () => undefined);
  const e3 = await t.throwsAsync(new BitcoinRpc(slow.url(), 150).call('getblockcount'));
  t.is(e3!.message, 'bitcoin node getblockcount: timed out after 150 ms');
  for (const e of [e1, e2, e3]) t.false(e!.message.includes('s3cret') || e!.message.includes('127.0.0.1'));
});

test('a connection the node closes as the request arrives is retried once', async (t) => {
  let first = true;
  const node = await standIn(t, (req, body, res) => {
    if (first) {
      first = false;
      req.socket.destroy();
      return;
    }
    answer(res, 200, [{ id: body[0].id, result: 'ok', error: null }]);
  });
  t.is(await new BitcoinRpc(node.url(), 1000).call('getbestblockhash'), 'ok');
  t.is(node.requests, 2);
});

test('a redirect is not followed (the credentials would go elsewhere)', async (t) => {
  const elsewhere = await standIn(t, (_req, _body, res) => answer(res, 200, [{ id: 0, result: 1, error: null }]));
  const node = await standIn(t, (_req, _body, res) => {
    res.writeHead(307, { location: elsewhere.url('') });
    res.end();
  });
  await t.throwsAsync(new BitcoinRpc(node.url(), 1000).call('getblockcount'), { instanceOf: BitcoinRpcError });
  t.is(elsewhere.requests, 0);
});
