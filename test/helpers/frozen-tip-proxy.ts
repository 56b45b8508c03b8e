/**
 * An HTTP proxy in front of an EVM node (127.0.0.1, port 0) that can freeze the tip: once frozen,
 * `latest` and `eth_blockNumber` answer the block the tip was at, its timestamp moved back
 * `ageSeconds` before now, and later blocks are unknown (null): what a node that stopped following
 * its peers that long ago shows. Everything else goes to the node as it is.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface Call {
  jsonrpc?: string;
  id?: unknown;
  method: string;
  params?: unknown[];
}

interface Answer {
  jsonrpc?: string;
  id?: unknown;
  result?: unknown;
  error?: unknown;
}

export interface FrozenTipProxy {
  url: string;
  /** Freezes the tip at the node's current block, `ageSeconds` old from now on. */
  freeze(ageSeconds: number): Promise<void>;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFrozenTipProxy(nodeUrl: string): Promise<FrozenTipProxy> {
  let frozen: { height: number; time: number } | null = null;
  const ask = async (body: unknown): Promise<unknown> => {
    const res = await fetch(nodeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  };
  const hex = (n: number): string => `0x${n.toString(16)}`;
  /** The proxy's own answer while frozen; undefined: the node's. */
  const own = (c: Call): Answer | undefined => {
    if (!frozen) return undefined;
    if (c.method === 'eth_blockNumber') return { jsonrpc: '2.0', id: c.id, result: hex(frozen.height) };
    if (c.method === 'eth_getBlockByNumber' && c.params?.[0] !== 'latest' && Number(c.params?.[0]) > frozen.height)
      return { jsonrpc: '2.0', id: c.id, result: null };
    return undefined;
  };
  const answer = async (c: Call): Promise<Answer> => {
    const mine = own(c);
    if (mine) return mine;
    const latest = frozen && c.method === 'eth_getBlockByNumber' && c.params?.[0] === 'latest';
    const got = (await ask(latest ? { ...c, params: [hex(frozen!.height), ...(c.params ?? []).slice(1)] } : c)) as Answer;
    const block = got.result as { number?: string } | null;
    if (frozen && c.method === 'eth_getBlockByNumber' && block && Number(block.number) === frozen.height)
      return { ...got, result: { ...block, timestamp: hex(frozen.time) } };
    return got;
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
        const out = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      })().catch(() => {
        res.writeHead(502);
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async freeze(ageSeconds) {
      const tip = (await ask({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })) as { result: string };
      frozen = { height: Number(tip.result), time: Math.floor(Date.now() / 1000) - ageSeconds };
    },
    thaw() {
      frozen = null;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
