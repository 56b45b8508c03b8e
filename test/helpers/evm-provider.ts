/**
 * A provider emulator for the EVM tests (issue 30 §4): an HTTP proxy on 127.0.0.1 in front of an
 * EVM node (anvil) that behaves, on command, like the real nodes and hosted endpoints do where anvil
 * does not (STACK.md "Real nodes and hosted providers"):
 * - `batchCap`: a batch of more calls is refused whole (one error object, as providers capping a
 *   batch at 20 answer);
 * - `responseCap`: geth's BatchResponseMaxSize: once a batch's answer passed this many bytes, every
 *   later call answers "response too large";
 * - `logsRange` (QuickNode's wording) and `logsResults` (Infura's) on eth_getLogs;
 * - `rateLimit`: a seeded fraction of requests answered HTTP 429 with a JSON body and Retry-After;
 * - `refuse()`: connections refused (the port closed), `accept()` again;
 * - `frozenTip`: the node says its newest block is this one (a node stuck behind);
 * - `indexing`: geth while its transaction indexer runs: a receipt or transaction by hash it would
 *   answer null for answers "transaction indexing is in progress";
 * - `hidden`: transactions whose lookups by hash answer null (a node that lost them);
 * - `noEip1559`: a chain without EIP-1559 as geth shows it: base fees of 0, type 2 refused;
 * - `stateWindow`: a node without archive state: state reads older than the newest N blocks answer
 *   "missing trie node".
 * - `l1Fee` (wei): an OP-stack chain: the receipts of transactions sent through it carry this
 *   `l1Fee`, and the chain takes it from their senders (anvil_setBalance, the first time the receipt
 *   is read: anvil charges no L1 fee itself); the GasPriceOracle's getL1Fee answers it.
 * - `transferGas`: an Arbitrum chain: eth_estimateGas of a call without data (a native transfer)
 *   answers this gas.
 * Everything else goes to the node unchanged. It counts requests and calls, so tests and benches see
 * what the daemon asked.
 */
import http from 'node:http';
import type net from 'node:net';
import { Transaction } from 'ethers';
import { SeededRandom } from './seeded-random';

/** The OP-stack GasPriceOracle predeploy (lower case). */
const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000f';

export interface ProviderRules {
  batchCap: number | null;
  responseCap: number | null;
  logsRange: number | null;
  logsResults: number | null;
  rateLimit: { fraction: number; retryAfterSeconds: number } | null;
  frozenTip: number | null;
  indexing: boolean;
  hidden: Set<string>;
  noEip1559: boolean;
  stateWindow: number | null;
  l1Fee: bigint | null;
  transferGas: bigint | null;
}

interface Call {
  jsonrpc?: string;
  id?: unknown;
  method: string;
  params?: unknown[];
}

interface Answer {
  jsonrpc: '2.0';
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

const STATE_METHODS = new Set(['eth_getBalance', 'eth_call', 'eth_getTransactionCount', 'eth_getCode', 'eth_getStorageAt']);
const BY_HASH = new Set(['eth_getTransactionReceipt', 'eth_getTransactionByHash']);

export const NO_RULES: ProviderRules = {
  batchCap: null,
  responseCap: null,
  logsRange: null,
  logsResults: null,
  rateLimit: null,
  frozenTip: null,
  indexing: false,
  hidden: new Set(),
  noEip1559: false,
  stateWindow: null,
  l1Fee: null,
  transferGas: null,
};

/** A hosted endpoint's limits as the issue names them: 5-block logs, 20-call batches, 1 MB answers. */
export const HOSTED: Partial<ProviderRules> = { logsRange: 5, batchCap: 20, responseCap: 1_000_000 };

export class EvmProvider {
  rules: ProviderRules;
  /** Requests and calls seen (a refused connection is neither). */
  readonly counts = { requests: 0, calls: 0, rateLimited: 0, tooLarge: 0, logsRefused: 0, batchesRefused: 0 };
  readonly methods = new Map<string, number>();
  /** Transactions sent through the provider: their sender by txid (lower case). */
  readonly sent = new Map<string, string>();
  /** The L1 data fee taken of each transaction (the `l1Fee` rule), by txid. */
  readonly l1Charged = new Map<string, bigint>();
  private readonly server: http.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly random: SeededRandom;
  private readonly upstream: URL;
  private listening = false;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  port = 0;

  private constructor(upstream: string, rules: Partial<ProviderRules>, seed: number) {
    this.upstream = new URL(upstream);
    this.rules = { ...NO_RULES, hidden: new Set(), ...rules };
    this.random = new SeededRandom(seed);
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
  }

  /** A proxy in front of the node at `upstream` (its JSON-RPC URL). */
  static async start(upstream: string, rules: Partial<ProviderRules> = {}, seed = 30): Promise<EvmProvider> {
    const p = new EvmProvider(upstream, rules, seed);
    await p.accept();
    return p;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  set(rules: Partial<ProviderRules>): void {
    this.rules = { ...this.rules, ...rules };
  }

  /** Listens (again, on the same port). */
  async accept(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      // Each refuse/accept cycle listens again: the error listener goes once listening (no pile-up).
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    this.listening = true;
  }

  /** Connections refused from now on; open ones cut. */
  async refuse(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  async stop(): Promise<void> {
    await this.refuse();
    this.agent.destroy();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    this.counts.requests++;
    let body: Call | Call[];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
    } catch {
      return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    }
    const calls = Array.isArray(body) ? body : [body];
    this.counts.calls += calls.length;
    for (const c of calls) {
      // A sender's count at a past block (a hex height, not a tag) is counted apart: a nonce's holder searched for.
      const method =
        c.method === 'eth_getTransactionCount' && /^0x/.test(String((c.params as unknown[] | undefined)?.[1])) ? 'eth_getTransactionCount@height' : c.method;
      this.methods.set(method, (this.methods.get(method) ?? 0) + 1);
    }
    const { rules } = this;
    if (rules.rateLimit && this.random.chance(rules.rateLimit.fraction)) {
      this.counts.rateLimited++;
      res.setHeader('retry-after', String(rules.rateLimit.retryAfterSeconds));
      return send(res, 429, {
        jsonrpc: '2.0',
        id: Array.isArray(body) ? null : (body.id ?? null),
        error: { code: -32005, message: 'daily request count exceeded, request rate limited' },
      });
    }
    if (Array.isArray(body) && rules.batchCap !== null && calls.length > rules.batchCap) {
      this.counts.batchesRefused++;
      return send(res, 200, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: `batch size limit exceeded: at most ${rules.batchCap} calls a batch` },
      });
    }
    try {
      const answers = await this.answer(calls);
      if (!Array.isArray(body)) return send(res, 200, answers[0]);
      send(res, 200, this.capped(answers));
    } catch (err) {
      send(res, 502, { jsonrpc: '2.0', id: null, error: { code: -32603, message: `upstream: ${(err as Error).message}` } });
    }
  }

  /** geth's BatchResponseMaxSize: the answers once past the cap say "response too large". */
  private capped(answers: Answer[]): Answer[] {
    const cap = this.rules.responseCap;
    if (cap === null) return answers;
    let size = 0;
    return answers.map((a) => {
      if (size > cap) {
        this.counts.tooLarge++;
        return { jsonrpc: '2.0', id: a.id, error: { code: -32003, message: 'response too large' } };
      }
      size += JSON.stringify(a).length;
      return a;
    });
  }

  /** Each call's answer: made here where a rule says so, else the node's (one request for the rest). */
  private async answer(calls: Call[]): Promise<Answer[]> {
    const { rules } = this;
    const out = new Array<Answer | undefined>(calls.length);
    const needsTip = rules.stateWindow !== null && calls.some((c) => STATE_METHODS.has(c.method));
    const realTip = needsTip ? Number(await this.upstreamCall('eth_blockNumber', [])) : 0;
    const forward: number[] = [];
    calls.forEach((c, i) => {
      const local = this.local(c, realTip);
      if (local) out[i] = { jsonrpc: '2.0', id: c.id ?? null, ...local };
      else forward.push(i);
    });
    if (forward.length > 0) {
      const got = await this.upstreamBatch(forward.map((i) => calls[i]!));
      forward.forEach((i, k) => (out[i] = this.rewrite(calls[i]!, { ...got[k]!, id: calls[i]!.id ?? null })));
      for (const i of forward)
        if (calls[i]!.method === 'eth_sendRawTransaction' && typeof out[i]!.result === 'string') this.noteSent(String(calls[i]!.params?.[0]));
      if (this.rules.l1Fee !== null) await this.chargeL1Fees(forward.map((i) => [calls[i]!, out[i]!] as const));
    }
    return out as Answer[];
  }

  /** An answer this provider makes itself, or null to ask the node. */
  private local(c: Call, realTip: number): Pick<Answer, 'result' | 'error'> | null {
    const { rules } = this;
    const p = c.params ?? [];
    if (rules.frozenTip !== null) {
      if (c.method === 'eth_blockNumber') return { result: hex(rules.frozenTip) };
      if (c.method === 'eth_getBlockByNumber' && typeof p[0] === 'string' && p[0].startsWith('0x') && Number(p[0]) > rules.frozenTip) return { result: null };
    }
    if (c.method === 'eth_getLogs') {
      const f = (p[0] ?? {}) as { fromBlock?: string; toBlock?: string };
      const from = Number(f.fromBlock ?? 0);
      const to = Number(f.toBlock ?? from);
      if (rules.logsRange !== null && to - from + 1 > rules.logsRange) {
        this.counts.logsRefused++;
        return { error: { code: -32614, message: `eth_getLogs is limited to a ${rules.logsRange} range` } };
      }
    }
    if (rules.stateWindow !== null && STATE_METHODS.has(c.method)) {
      const tag = p[p.length - 1];
      if (typeof tag === 'string' && tag.startsWith('0x') && Number(tag) < realTip - rules.stateWindow)
        return { error: { code: -32000, message: `missing trie node ${'ab'.repeat(32)} (path ) state 0x${'cd'.repeat(32)} is not available` } };
    }
    if (BY_HASH.has(c.method) && rules.hidden.has(String(p[0]).toLowerCase())) return { result: null };
    if (c.method === 'eth_sendRawTransaction' && rules.noEip1559 && String(p[0]).startsWith('0x02'))
      return { error: { code: -32000, message: 'transaction type not supported' } };
    if (c.method === 'eth_call' && rules.l1Fee !== null && String((p[0] as { to?: string })?.to).toLowerCase() === GAS_PRICE_ORACLE)
      return { result: '0x' + rules.l1Fee.toString(16).padStart(64, '0') };
    if (c.method === 'eth_estimateGas' && rules.transferGas !== null && !(p[0] as { data?: string })?.data) return { result: hex(Number(rules.transferGas)) };
    return null;
  }

  private noteSent(raw: string): void {
    const tx = Transaction.from(raw);
    if (tx.hash && tx.from) this.sent.set(tx.hash.toLowerCase(), tx.from);
  }

  /** Receipts of transactions sent through here carry the L1 data fee; their senders pay it once (as an OP-stack chain takes it). */
  private async chargeL1Fees(answered: ReadonlyArray<readonly [Call, Answer]>): Promise<void> {
    const fee = this.rules.l1Fee!;
    for (const [c, a] of answered) {
      if (c.method !== 'eth_getTransactionReceipt' || !a.result || typeof a.result !== 'object') continue;
      const txid = String(c.params?.[0]).toLowerCase();
      const from = this.sent.get(txid);
      if (!from) continue;
      a.result = { ...(a.result as object), l1Fee: '0x' + fee.toString(16) };
      if (this.l1Charged.has(txid)) continue;
      this.l1Charged.set(txid, fee);
      const balance = BigInt(String(await this.upstreamCall('eth_getBalance', [from, 'latest'])));
      await this.upstreamCall('anvil_setBalance', [from, '0x' + (balance > fee ? balance - fee : 0n).toString(16)]);
    }
  }

  /** The node's answer as this provider shows it. */
  private rewrite(c: Call, a: Answer): Answer {
    const { rules } = this;
    if (a.error) return a;
    if (c.method === 'eth_getLogs' && rules.logsResults !== null && Array.isArray(a.result) && a.result.length > rules.logsResults) {
      this.counts.logsRefused++;
      return { jsonrpc: '2.0', id: a.id, error: { code: -32005, message: `query returned more than ${rules.logsResults} results` } };
    }
    if (BY_HASH.has(c.method) && rules.indexing && a.result === null)
      return { jsonrpc: '2.0', id: a.id, error: { code: -32000, message: 'transaction indexing is in progress' } };
    if (rules.noEip1559) {
      if (c.method === 'eth_feeHistory' && a.result && typeof a.result === 'object') {
        const h = a.result as { baseFeePerGas?: string[] };
        return { ...a, result: { ...h, baseFeePerGas: (h.baseFeePerGas ?? []).map(() => '0x0') } };
      }
      if (c.method === 'eth_getBlockByNumber' && a.result && typeof a.result === 'object')
        return { ...a, result: { ...(a.result as object), baseFeePerGas: '0x0' } };
    }
    return a;
  }

  private async upstreamCall(method: string, params: unknown[]): Promise<unknown> {
    const [a] = await this.upstreamBatch([{ method, params }]);
    if (a?.error) throw new Error(a.error.message);
    return a?.result;
  }

  private async upstreamBatch(calls: Call[]): Promise<Answer[]> {
    const frozen = this.rules.frozenTip;
    const body = calls.map((c, id) => ({
      jsonrpc: '2.0',
      id,
      method: c.method,
      // A frozen node's newest block is the frozen one.
      params:
        frozen !== null && c.method === 'eth_getBlockByNumber' && (c.params?.[0] === 'latest' || c.params?.[0] === 'pending')
          ? [hex(frozen), ...(c.params ?? []).slice(1)]
          : (c.params ?? []),
    }));
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        {
          host: this.upstream.hostname,
          port: this.upstream.port,
          path: this.upstream.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          agent: this.agent,
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => parts.push(d));
          res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    const parsed = JSON.parse(text) as Answer[] | Answer;
    const list = Array.isArray(parsed) ? parsed : [parsed];
    const byId = new Array<Answer>(calls.length);
    for (const a of list) byId[Number(a.id)] = a;
    return byId;
  }
}

const hex = (n: number): string => `0x${n.toString(16)}`;

function send(res: http.ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
