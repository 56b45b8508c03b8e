/**
 * An EVM node's JSON-RPC over Node's fetch: one POST a call, or one POST for a batch, each bounded
 * by the chain's rpc_timeout_ms and the caller's AbortSignal. (ethers' provider decodes response
 * bodies with a UTF-8 decoder written in JavaScript, which took half the fetch time of a block of
 * 1,000 transactions, and takes no AbortSignal.) Errors leave as one short line naming the method
 * and the reason, never the node's URL, which may carry credentials or an API key.
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
  private readonly url: string;
  private readonly headers: Record<string, string> = { 'Content-Type': 'application/json' };

  constructor(rpcUrl: string, private readonly timeoutMs: number) {
    const url = new URL(rpcUrl);
    if (url.username || url.password) {
      // fetch refuses URLs with credentials: they travel as Basic authentication instead.
      const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
      this.headers.Authorization = `Basic ${basic}`;
      url.username = '';
      url.password = '';
    }
    this.url = url.toString();
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
    const body = calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }));
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let text: string;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(calls.length === 1 ? body[0] : body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: 'error',
      });
      text = await res.text();
      if (!res.ok && !text.startsWith('{') && !text.startsWith('[')) throw new RpcError(`evm node ${method}: HTTP ${res.status}`);
    } catch (err) {
      if (err instanceof RpcError) throw err;
      signal?.throwIfAborted();
      throw new RpcError(`evm node ${method}: ${timeout.aborted ? 'timed out' : unreachable(err)}`);
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

class RpcError extends Error {}

function resultOf<T>(method: string, answer: RpcAnswer | undefined): T {
  if (!answer) throw new RpcError(`evm node ${method}: no answer`);
  if (answer.error) throw new RpcError(`evm node ${method}: ${String(answer.error.message ?? `error ${answer.error.code}`).slice(0, 200)}`);
  if (!('result' in answer)) throw new RpcError(`evm node ${method}: an answer without a result`);
  return answer.result as T;
}

function unreachable(err: unknown): string {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return code ? `unreachable (${code})` : 'unreachable';
}
