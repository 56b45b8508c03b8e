import { EventEmitter } from 'node:events';
import type { Agent } from 'undici';
import { LearnedLimit } from '../learned-limit';
import { NodeUnavailable } from '../types';

/**
 * An EVM node's JSON-RPC over undici's client: one POST a call, or one POST for a batch, each
 * abandoned after the chain's rpc_timeout_ms or when the caller's AbortSignal aborts. (ethers'
 * provider decodes response bodies with a UTF-8 decoder written in JavaScript and takes no
 * AbortSignal; Node's fetch with an AbortSignal.timeout and an AbortSignal.any per request costs
 * more CPU per call: docs/benchmarks.md, addresses and chains.)
 * Redirects are not followed. Errors leave as one short line naming the method and the reason,
 * never the node's URL, which may carry credentials or an API key.
 */
export interface RpcCall {
  method: string;
  params: unknown[];
}

interface RpcAnswer {
  id?: number;
  result?: unknown;
  error?: { code?: number; message?: string; data?: unknown };
}

/** Batched read requests in flight at once. */
const PARALLEL_POSTS = 4;
/** Rounds one batch (or log query) may take to get every answer while the node cuts it shorter. */
const MAX_ROUNDS = 12;

/**
 * What the EVM adapter needs of a node's JSON-RPC: one object per endpoint, so a pool of endpoints
 * can wrap several of them (PRODUCT §15). `getLogs` is optional for nodes in memory (tests): the
 * adapter then asks eth_getLogs in one call.
 */
export type EvmTransport = Pick<EvmRpc, 'call' | 'batch'> & Partial<Pick<EvmRpc, 'batchSettled' | 'getLogs'>>;

export interface BatchOptions {
  /**
   * What stands for a call geth answers "transaction indexing is in progress" (a receipt or a
   * transaction by hash while its indexer runs: not known yet); without it such a call fails the
   * batch as NodeUnavailable.
   */
  notYet?: unknown;
}

/**
 * An EVM node's JSON-RPC over one endpoint. The calls of a batch go in requests of a learned size
 * (at most the chain's `max_batch`): a node that answers some calls "response too large" (geth's
 * cap on a batch's answer), refuses the batch for its size (a provider's cap) or leaves calls
 * unanswered has those calls asked again in smaller requests, and the size it takes is kept for
 * the next batches and grows back after successes. eth_getLogs ranges are learned the same way
 * (`getLogs`). What says the node cannot answer now (HTTP 429, 5xx, a quota's 403, JSON-RPC -32005,
 * geth's indexer at work, unreachable, timed out) throws NodeUnavailable, with Retry-After when
 * given; an error the node answered about the call itself throws RpcError.
 */
export class EvmRpc {
  private readonly origin: string;
  private readonly path: string;
  private readonly headers: Record<string, string> = { 'content-type': 'application/json' };
  private readonly agent: Agent;
  /** Calls one request may carry, learned under `max_batch`. */
  readonly batchLimit: LearnedLimit;
  /** Blocks one eth_getLogs may span, learned under `logs_range`. */
  readonly logsLimit: LearnedLimit;

  constructor(
    rpcUrl: string,
    private readonly timeoutMs: number,
    limits: { maxBatch?: number; logsRange?: number } = {},
  ) {
    const url = new URL(rpcUrl);
    if (url.username || url.password) {
      // Credentials in the URL travel as Basic authentication.
      const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      this.headers.authorization = `Basic ${basic}`;
    }
    this.origin = url.origin;
    this.path = `${url.pathname}${url.search}`;
    // The request's own timer decides; these only keep undici from cutting it shorter.
    // undici is loaded with the first EVM client: a process without an EVM chain never needs it.
    const { Agent } = require('undici') as typeof import('undici');
    this.agent = new Agent({ connect: { timeout: timeoutMs + 1000 }, headersTimeout: timeoutMs + 1000, bodyTimeout: timeoutMs + 1000 });
    this.batchLimit = new LearnedLimit(limits.maxBatch ?? 100);
    this.logsLimit = new LearnedLimit(limits.logsRange ?? 100);
  }

  async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    const [answer] = await this.answers([{ method, params }], signal, false);
    return resultOf<T>(method, answer);
  }

  /**
   * The results in the order of `calls`; a call the node answered with an error fails the whole.
   * Reads only: the requests of a long batch are sent a few at a time side by side.
   */
  async batch<T>(calls: RpcCall[], signal?: AbortSignal, options: BatchOptions = {}): Promise<T[]> {
    const answers = await this.answers(calls, signal, false);
    return calls.map((c, i) => {
      const a = answers[i];
      if ('notYet' in options && a?.error && INDEXING.test(String(a.error.message))) return options.notYet as T;
      return resultOf<T>(c.method, a);
    });
  }

  /**
   * Each call's result or its error, in the order of `calls`, the requests one after another (so
   * transactions reach the node in the order given: a sender's nonces in turn). A node not reached,
   * or one that says it cannot answer now, fails the whole (NodeUnavailable): nothing is read as
   * the node's word on a call it did not take.
   */
  async batchSettled<T>(calls: RpcCall[], signal?: AbortSignal): Promise<Array<{ result: T } | { error: string }>> {
    const answers = await this.answers(calls, signal, true);
    return calls.map((c, i) => {
      try {
        return { result: resultOf<T>(c.method, answers[i]) };
      } catch (err) {
        if (err instanceof NodeUnavailable) throw err;
        return { error: (err as Error).message };
      }
    });
  }

  /**
   * eth_getLogs of `filter` over blocks `from`..`to`, in ranges of the learned size (at most the
   * chain's `logs_range`), batched. A range the node refuses for its span or its number of results
   * (QuickNode's block range, Infura's 10,000 results, Alchemy's log response size) is asked again
   * in smaller ranges, at the size the node named when it did. The logs in block order.
   */
  async getLogs<T>(filter: Record<string, unknown>, from: number, to: number, signal?: AbortSignal): Promise<T[]> {
    let ranges = split(from, to, this.logsLimit.value);
    const found = new Map<number, T[]>();
    for (let round = 0; ranges.length > 0; round++) {
      if (round === MAX_ROUNDS) throw new NodeUnavailable(`evm node eth_getLogs: blocks ${from}..${to} were still refused after ${MAX_ROUNDS} smaller tries`);
      const answers = await this.answers(
        ranges.map(([a, b]) => ({ method: 'eth_getLogs', params: [{ ...filter, fromBlock: hex(a), toBlock: hex(b) }] })),
        signal,
        false,
      );
      const again: Array<[number, number]> = [];
      let refused = false;
      ranges.forEach(([a, b], i) => {
        const answer = answers[i];
        const message = String(answer?.error?.message ?? '');
        if (answer?.error && LOGS_LIMIT.test(message) && b > a) {
          refused = true;
          const size = this.logsLimit.tooMuch(b - a + 1, statedRange(message), PLAN_RANGE.test(message));
          again.push(...split(a, b, Math.min(size, Math.max(1, Math.floor((b - a + 1) / 2)))));
          return;
        }
        found.set(a, resultOf<T[]>('eth_getLogs', answer));
      });
      if (!refused) this.logsLimit.succeeded();
      ranges = again;
    }
    return [...found.keys()].sort((x, y) => x - y).flatMap((k) => found.get(k)!);
  }

  /**
   * Every call's answer (a result or the node's error), asked in requests of the learned size; calls
   * left unanswered or answered "response too large" are asked again in smaller requests.
   * `inOrder`: the requests one after another.
   */
  private async answers(calls: RpcCall[], signal: AbortSignal | undefined, inOrder: boolean): Promise<RpcAnswer[]> {
    const out = new Array<RpcAnswer>(calls.length);
    let pending = calls.map((_, i) => i);
    for (let round = 0; pending.length > 0; round++) {
      if (round === MAX_ROUNDS)
        throw new NodeUnavailable(`evm node ${label(pending.map((i) => calls[i]!))}: no full answer after ${MAX_ROUNDS} smaller requests`);
      const chunks: number[][] = [];
      const size = this.batchLimit.value;
      for (let i = 0; i < pending.length; i += size) chunks.push(pending.slice(i, i + size));
      const again: number[] = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < chunks.length) {
          const chunk = chunks[next++]!;
          const got = await this.post(
            chunk.map((i) => calls[i]!),
            signal,
          );
          chunk.forEach((i, k) => {
            const a = got[k];
            if (a === undefined || (chunk.length > 1 && a.error && TOO_LARGE.test(String(a.error.message)))) again.push(i);
            else out[i] = a;
          });
        }
      };
      await Promise.all(Array.from({ length: inOrder ? 1 : Math.min(PARALLEL_POSTS, chunks.length) }, worker));
      pending = again.sort((a, b) => a - b);
    }
    return out;
  }

  /**
   * One request: the answers of `calls` by place (undefined: not answered, ask again). Learns from
   * it: a batch cut short or refused for its size shrinks the batch limit; one answered in full
   * counts as a success.
   */
  private async post(calls: RpcCall[], signal?: AbortSignal): Promise<Array<RpcAnswer | undefined>> {
    const method = label(calls);
    const body =
      calls.length === 1 ? { jsonrpc: '2.0', id: 0, ...calls[0] } : calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }));
    const stop = new RequestStop(this.timeoutMs, signal);
    let text: string;
    let status: number;
    let retryAfter: string | string[] | undefined;
    try {
      const res = await this.agent.request({
        origin: this.origin,
        path: this.path,
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body),
        signal: stop,
      });
      text = await res.body.text();
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
    } catch (err) {
      signal?.throwIfAborted();
      // A large batch may be what took too long: the next ones are smaller.
      if (stop.timedOut && calls.length > 1) this.batchLimit.tooMuch(calls.length);
      throw new NodeUnavailable(`evm node ${method}: ${stop.timedOut ? 'timed out' : unreachable(err)}`);
    } finally {
      stop.done();
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const ok = status >= 200 && status < 300;
    const single = !Array.isArray(parsed) && typeof parsed === 'object' && parsed !== null ? (parsed as RpcAnswer) : null;
    const message = String(single?.error?.message ?? '');
    if (calls.length > 1 && (status === 413 || (single?.error && BATCH_TOO_LARGE.test(message)))) {
      // Refused for its size: asked again in smaller requests.
      this.batchLimit.tooMuch(calls.length, statedNumber(message), true);
      return calls.map(() => undefined);
    }
    if (status === 429 || ((status === 403 || status === 503 || ok) && rateLimited(single?.error)))
      throw new NodeUnavailable(
        `evm node ${method}: rate limited (HTTP ${status}${message ? `: ${message.slice(0, 120)}` : ''})`,
        retryAfterMs(retryAfter, single?.error),
        true,
      );
    // Some nodes send a JSON-RPC error with HTTP 400 or 500; any other status is about the node, not the call.
    const rpcShaped = parsed !== undefined && (Array.isArray(parsed) || (single !== null && ('error' in single || 'result' in single)));
    if (!ok && !((status === 400 || status === 500) && rpcShaped))
      throw new NodeUnavailable(`evm node ${method}: HTTP ${status}`, status === 503 ? retryAfterMs(retryAfter, undefined) : null);
    // A batch answered with one error: every call has it.
    if (single && calls.length > 1) return calls.map(() => single);
    if (parsed === undefined) throw new NodeUnavailable(`evm node ${method}: the answer is not JSON`);
    const answers = (Array.isArray(parsed) ? parsed : [parsed]) as RpcAnswer[];
    if (calls.length === 1) return answers;
    // The calls' ids are their places in the batch.
    const byId = new Array<RpcAnswer | undefined>(calls.length);
    for (const a of answers) if (Number.isInteger(a?.id) && a.id! >= 0 && a.id! < calls.length) byId[a.id!] = a;
    const limited = byId.find((a) => rateLimited(a?.error));
    if (limited)
      throw new NodeUnavailable(
        `evm node ${method}: rate limited (${String(limited.error!.message).slice(0, 120)})`,
        retryAfterMs(retryAfter, limited.error),
        true,
      );
    const answered = byId.filter((a) => a !== undefined && !(a.error && TOO_LARGE.test(String(a.error.message)))).length;
    if (answered < calls.length) this.batchLimit.tooMuch(calls.length, answered > 0 ? answered : undefined);
    // Only a request of the learned size shows that size works.
    else if (calls.length >= this.batchLimit.value) this.batchLimit.succeeded();
    return byId;
  }
}

/**
 * What cuts one request short, as undici takes it (an EventEmitter with `aborted`): its timer, or
 * the caller's signal. No AbortSignal is made per request.
 */
class RequestStop extends EventEmitter {
  aborted = false;
  timedOut = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    timeoutMs: number,
    private readonly caller?: AbortSignal,
  ) {
    super();
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.abort();
    }, timeoutMs);
    if (caller?.aborted) this.abort();
    else caller?.addEventListener('abort', this.abort, { once: true });
  }

  private readonly abort = (): void => {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  };

  done(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.abort);
  }
}

/** A call the node answered with an error about the call itself; `answered` false for one that got no answer. */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly answered = false,
  ) {
    super(message);
  }
}

/** geth's answer for a block range's or a batch's answer above its cap (BatchResponseMaxSize), and the like. */
const TOO_LARGE = /response too large|response size (limit )?exceeded|response is too (big|large)/i;
/** A batch refused for its number of calls (geth, Nethermind, Ankr, MegaNode, Alchemy wordings). */
const BATCH_TOO_LARGE =
  /batch (size )?(is )?too large|batch size limit|batch (size )?exceeds?(ed)?|batch limit|too many (requests|calls) in (a |the )?batch|maximum batch/i;
/** eth_getLogs refused for its span or its results: QuickNode, Infura, Alchemy and node wordings. */
const LOGS_LIMIT =
  /limited to a? ?[\d,]+ ?(block )?range|block range|more than [\d,]+ (results|logs)|log response size exceeded|too many (logs|results)|range (is )?too (large|wide|big)|exceed(s|ed)? (the )?max(imum)? (block )?range|query timeout exceeded|response too large/i;
/** geth while its transaction indexer runs (receipts and transactions by hash). */
const INDEXING = /transaction indexing is in progress|indexing in progress/i;
/** Rate limits and quotas in a JSON-RPC error's words (the code -32005 is also Infura's 10,000 results, read as a log limit first). */
const RATE_WORDS =
  /rate limit|too many requests|request rate|rate exceeded|exceeded .*(capacity|quota|rate|limit)|daily request|request count exceeded|compute units|credits? (limit|exhausted)|quota/i;

function rateLimited(error: RpcAnswer['error'] | undefined): boolean {
  if (!error) return false;
  const message = String(error.message ?? '');
  if (LOGS_LIMIT.test(message) || BATCH_TOO_LARGE.test(message)) return false;
  return error.code === 429 || error.code === -32005 || error.code === -32029 || RATE_WORDS.test(message);
}

/** Retry-After (seconds or an HTTP date), else a body's `backoff_seconds` (Infura); null when neither says. */
function retryAfterMs(header: string | string[] | undefined, error: RpcAnswer['error'] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value.trim() !== '') {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
    const at = Date.parse(value);
    if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  }
  const backoff = (error?.data as { backoff_seconds?: unknown } | undefined)?.backoff_seconds;
  return typeof backoff === 'number' && backoff >= 0 ? Math.round(backoff * 1000) : null;
}

/** The number a batch refusal names ("max 20", "limit 500"), if any. */
function statedNumber(message: string): number | undefined {
  const m = /(\d[\d,]*)/.exec(message);
  return m ? Number(m[1]!.replace(/,/g, '')) : undefined;
}

/** A log range refused for the endpoint's plan (QuickNode's "limited to a 5 range"), not for this range's results. */
const PLAN_RANGE = /limited to a? ?([\d,]+) ?(block )?range/i;

/** The span a log refusal names: QuickNode's "limited to a 5 range", or a suggested "[0xA, 0xB]" (Infura, Alchemy). */
function statedRange(message: string): number | undefined {
  const limited = PLAN_RANGE.exec(message);
  if (limited) return Number(limited[1]!.replace(/,/g, ''));
  const suggested = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(message);
  if (suggested) {
    const span = Number(BigInt(suggested[2]!) - BigInt(suggested[1]!)) + 1;
    if (span >= 1) return span;
  }
  return undefined;
}

function resultOf<T>(method: string, answer: RpcAnswer | undefined): T {
  if (!answer) throw new RpcError(`evm node ${method}: no answer`);
  if (answer.error) {
    const message = String(answer.error.message ?? `error ${answer.error.code}`).slice(0, 200);
    // Nothing is known of the call yet: another endpoint, or this one later, answers it.
    if (INDEXING.test(message)) throw new NodeUnavailable(`evm node ${method}: ${message}`);
    throw new RpcError(`evm node ${method}: ${message}`, true);
  }
  if (!('result' in answer)) throw new RpcError(`evm node ${method}: an answer without a result`);
  return answer.result as T;
}

const label = (calls: RpcCall[]): string => (calls.length === 1 ? calls[0]!.method : `batch of ${calls.length} (${calls[0]!.method}...)`);

const hex = (n: number): string => `0x${n.toString(16)}`;

/** `from`..`to` in ranges of at most `size` blocks. */
function split(from: number, to: number, size: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let a = from; a <= to; a += size) out.push([a, Math.min(to, a + size - 1)]);
  return out;
}

function unreachable(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? `unreachable (${code})` : 'unreachable';
}
