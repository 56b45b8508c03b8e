import { EventEmitter } from 'node:events';
import { Agent } from 'undici';

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
  error?: { code?: number; message?: string };
}

/** Calls per batched POST: public nodes commonly refuse larger batches. */
const MAX_BATCH = 100;
/** Batched read requests in flight at once. */
const PARALLEL_POSTS = 4;

export class EvmRpc {
  private readonly origin: string;
  private readonly path: string;
  private readonly headers: Record<string, string> = { 'content-type': 'application/json' };
  private readonly agent: Agent;

  constructor(rpcUrl: string, private readonly timeoutMs: number) {
    const url = new URL(rpcUrl);
    if (url.username || url.password) {
      // Credentials in the URL travel as Basic authentication.
      const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      this.headers.authorization = `Basic ${basic}`;
    }
    this.origin = url.origin;
    this.path = `${url.pathname}${url.search}`;
    // The request's own timer decides; these only keep undici from cutting it shorter.
    this.agent = new Agent({ connect: { timeout: timeoutMs + 1000 }, headersTimeout: timeoutMs + 1000, bodyTimeout: timeoutMs + 1000 });
  }

  async call<T>(method: string, params: unknown[], signal?: AbortSignal): Promise<T> {
    const [answer] = await this.post([{ method, params }], signal);
    return resultOf<T>(method, answer);
  }

  /**
   * The results in the order of `calls`; any failed call fails the whole batch. Reads only: the
   * requests of a long batch are sent a few at a time side by side.
   */
  async batch<T>(calls: RpcCall[], signal?: AbortSignal): Promise<T[]> {
    const chunks: RpcCall[][] = [];
    for (let i = 0; i < calls.length; i += MAX_BATCH) chunks.push(calls.slice(i, i + MAX_BATCH));
    const answers: Array<Array<RpcAnswer | undefined>> = new Array(chunks.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < chunks.length) {
        const i = next++;
        answers[i] = await this.post(chunks[i]!, signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_POSTS, chunks.length) }, worker));
    return chunks.flatMap((chunk, i) => chunk.map((c, j) => resultOf<T>(c.method, answers[i]![j])));
  }

  /**
   * Each call's result or its error, in the order of `calls`, the requests one after another (so
   * transactions reach the node in the order given: a sender's nonces in turn). A node not reached
   * fails the whole.
   */
  async batchSettled<T>(calls: RpcCall[], signal?: AbortSignal): Promise<Array<{ result: T } | { error: string }>> {
    const out: Array<{ result: T } | { error: string }> = [];
    for (let i = 0; i < calls.length; i += MAX_BATCH) {
      const chunk = calls.slice(i, i + MAX_BATCH);
      const answers = await this.post(chunk, signal);
      chunk.forEach((c, j) => {
        try {
          out.push({ result: resultOf<T>(c.method, answers[j]) });
        } catch (err) {
          out.push({ error: (err as Error).message });
        }
      });
    }
    return out;
  }

  private async post(calls: RpcCall[], signal?: AbortSignal): Promise<Array<RpcAnswer | undefined>> {
    const method = calls.length === 1 ? calls[0]!.method : `batch of ${calls.length} (${calls[0]!.method}...)`;
    const body = calls.length === 1 ? { jsonrpc: '2.0', id: 0, ...calls[0] } : calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }));
    const stop = new RequestStop(this.timeoutMs, signal);
    let text: string;
    try {
      const res = await this.agent.request({ origin: this.origin, path: this.path, method: 'POST', headers: this.headers, body: JSON.stringify(body), signal: stop });
      text = await res.body.text();
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      if (!ok && !text.startsWith('{') && !text.startsWith('[')) throw new RpcError(`evm node ${method}: HTTP ${res.statusCode}`);
    } catch (err) {
      if (err instanceof RpcError) throw err;
      signal?.throwIfAborted();
      throw new RpcError(`evm node ${method}: ${stop.timedOut ? 'timed out' : unreachable(err)}`);
    } finally {
      stop.done();
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RpcError(`evm node ${method}: the answer is not JSON`);
    }
    const answers = (Array.isArray(parsed) ? parsed : [parsed]) as RpcAnswer[];
    if (calls.length === 1) return answers;
    // The calls' ids are their places in the batch.
    const byId = new Array<RpcAnswer | undefined>(calls.length);
    for (const a of answers) if (Number.isInteger(a?.id) && a.id! >= 0 && a.id! < calls.length) byId[a.id!] = a;
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

  constructor(timeoutMs: number, private readonly caller?: AbortSignal) {
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

/** A call that failed; `answered` when the node answered it with a JSON-RPC error (its message follows the method). */
export class RpcError extends Error {
  constructor(message: string, readonly answered = false) {
    super(message);
  }
}

function resultOf<T>(method: string, answer: RpcAnswer | undefined): T {
  if (!answer) throw new RpcError(`evm node ${method}: no answer`);
  if (answer.error) throw new RpcError(`evm node ${method}: ${String(answer.error.message ?? `error ${answer.error.code}`).slice(0, 200)}`, true);
  if (!('result' in answer)) throw new RpcError(`evm node ${method}: an answer without a result`);
  return answer.result as T;
}

function unreachable(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? `unreachable (${code})` : 'unreachable';
}
