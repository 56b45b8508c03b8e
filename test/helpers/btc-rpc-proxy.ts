/**
 * A JSON-RPC proxy in front of a bcoin node that makes it answer as the real nodes merchants run do
 * where the tests need it (STACK.md "Real nodes"): Bitcoin Core's synchronous refusal of a
 * transaction at `sendrawtransaction` (bcoin relays without answering), and a node that hides a
 * transaction: "not found" to every lookup by txid and absent from its mempool list, as a node
 * without a transaction index, one that dropped it, or one that lies does; and a pruned node
 * (Bitcoin Core `-prune`), which answers "Block not available (pruned data)" for blocks below its
 * prune height. Other blocks pass untouched.
 * Listens on 127.0.0.1 only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpRequest, isConnectionReset } from '../../src/shared/http-request';
import { Transaction } from 'bitcoinjs-lib';

interface Call {
  jsonrpc?: string;
  id: number;
  method: string;
  params: unknown[];
}

interface Reply {
  id: number;
  result: unknown;
  error: { code: number; message: string } | null;
}

/** What a hidden transaction's broadcast does: reach the node all the same, or vanish (a node that answers its txid and drops it). */
export type HideMode = 'forward' | 'drop';

export interface BtcRpcProxy {
  /** The chain's `rpc_url` through the proxy (the node's credentials kept). */
  url: string;
  port: number;
  /** Every lookup of `txid` answers "not found"; its broadcast goes on to the node or is dropped. */
  hide(txid: string, mode?: HideMode): void;
  unhide(txid: string): void;
  /**
   * `sendrawtransaction` of a transaction `refuse` names answers Bitcoin Core's error with that
   * reason and never reaches the node; with `lie`, it reaches the node all the same.
   */
  refuse(refuse: ((tx: Transaction) => { code: number; message: string } | null) | null, opts?: { lie?: boolean }): void;
  /** The next transaction broadcast is answered with its txid, never reaches the node, and is hidden from then on. */
  dropNext(): void;
  /** The next transaction broadcast reaches the node and is hidden from every lookup from then on. */
  hideNext(): void;
  /** The next broadcast of a transaction not broadcast before reaches the node, whose answer is lost: a gateway's HTTP 504 (the outcome unknown). */
  loseNextAnswer(): void;
  /** From now on blocks below `height` answer Core's pruned-data error and getblockchaininfo says `pruned` with that `pruneheight`; null: unpruned. */
  prune(height: number | null): void;
  /** The txids broadcast through the proxy, in order. */
  readonly broadcasts: string[];
  close(): Promise<void>;
}

const NOT_FOUND = { code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' };
const NOT_IN_MEMPOOL = { code: -5, message: 'Transaction not in mempool' };
const PRUNED = { code: -1, message: 'Block not available (pruned data)' };

export async function startBtcRpcProxy(nodeUrl: string): Promise<BtcRpcProxy> {
  const target = new URL(nodeUrl);
  const auth =
    target.username || target.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`
      : null;
  const hidden = new Map<string, HideMode>();
  let refusal: ((tx: Transaction) => { code: number; message: string } | null) | null = null;
  let lie = false;
  let next: HideMode | null = null;
  const broadcasts: string[] = [];
  let pruneHeight: number | null = null;
  let loseAnswer = false;
  /** Block hashes by height, as getblockhash answered them (the scanner asks for a hash before its block). */
  const heightOf = new Map<string, number>();

  /** The proxy's own answer to a call, or undefined to ask the node; `lies`: refusals to tell of calls the node is asked all the same. */
  /** `firstSent`: the request's calls that broadcast a transaction for the first time. */
  const intercept = (c: Call, lies: Map<number, { code: number; message: string }>, firstSent: Set<number>): Omit<Reply, 'id'> | undefined => {
    const first = c.params[0];
    if (c.method === 'sendrawtransaction' && typeof first === 'string') {
      const tx = Transaction.fromHex(first);
      const txid = tx.getId();
      if (!broadcasts.includes(txid)) firstSent.add(c.id);
      broadcasts.push(txid);
      if (next) {
        hidden.set(txid, next);
        next = null;
      }
      const refused = refusal?.(tx);
      if (refused && lie) lies.set(c.id, refused);
      else if (refused) return { result: null, error: refused };
      if (hidden.get(txid) === 'drop') return { result: txid, error: null };
      return undefined;
    }
    if (c.method === 'getblock' && typeof first === 'string' && pruneHeight !== null && (heightOf.get(first) ?? Infinity) < pruneHeight)
      return { result: null, error: PRUNED };
    if (typeof first !== 'string' || !hidden.has(first)) return undefined;
    if (c.method === 'getrawtransaction') return { result: null, error: NOT_FOUND };
    if (c.method === 'getmempoolentry') return { result: null, error: NOT_IN_MEMPOOL };
    if (c.method === 'gettxout') return { result: null, error: null };
    return undefined;
  };

  const forward = async (calls: Call[]): Promise<Reply[]> => {
    if (calls.length === 0) return [];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (auth) headers.authorization = auth;
    // node:http (a third of fetch's CPU per call); a kept-alive connection bcoin closed just then is asked once more.
    const url = `${target.protocol}//${target.host}${target.pathname}`;
    const send = () => httpRequest(url, { method: 'POST', headers, body: JSON.stringify(calls) });
    const res = await send().catch((err: unknown) => (isConnectionReset(err) ? send() : Promise.reject(err)));
    return JSON.parse(res.text) as Reply[];
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
        const calls = Array.isArray(body) ? body : [body];
        const own = new Map<number, Omit<Reply, 'id'>>();
        const firstSent = new Set<number>();
        const lies = new Map<number, { code: number; message: string }>();
        for (const c of calls) {
          const answer = intercept(c, lies, firstSent);
          if (answer) own.set(c.id, answer);
        }
        const asked = await forward(calls.filter((c) => !own.has(c.id)));
        if (loseAnswer && calls.some((c) => c.method === 'sendrawtransaction' && !own.has(c.id) && firstSent.has(c.id))) {
          loseAnswer = false;
          res.writeHead(504, { 'content-type': 'text/html' });
          res.end('<html><body><h1>504 Gateway Time-out</h1></body></html>');
          return;
        }
        const byId = new Map(asked.map((r) => [r.id, r]));
        const replies = calls.map((c): Reply => {
          const mine = own.get(c.id);
          if (mine) return { id: c.id, ...mine };
          const r = byId.get(c.id)!;
          const told = lies.get(c.id);
          if (told) return { id: c.id, result: null, error: told };
          if (c.method === 'getrawmempool' && Array.isArray(r.result)) return { ...r, result: (r.result as string[]).filter((txid) => !hidden.has(txid)) };
          if (c.method === 'getblockhash' && typeof r.result === 'string') heightOf.set(r.result, c.params[0] as number);
          if (c.method === 'getblockchaininfo' && pruneHeight !== null && r.result)
            return { ...r, result: { ...(r.result as object), pruned: true, pruneheight: pruneHeight } };
          return r;
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(body) ? replies : replies[0]));
      })().catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: null, result: null, error: { code: -32603, message: String(err) } }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(nodeUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    port: Number(url.port),
    hide: (txid, mode = 'forward') => void hidden.set(txid, mode),
    unhide: (txid) => void hidden.delete(txid),
    refuse: (r, opts = {}) => {
      refusal = r;
      lie = opts.lie === true;
    },
    dropNext: () => void (next = 'drop'),
    prune: (height) => void (pruneHeight = height),
    hideNext: () => void (next = 'forward'),
    loseNextAnswer: () => void (loseAnswer = true),
    broadcasts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
