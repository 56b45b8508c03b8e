import { httpRequest, isConnectionReset, type HttpAnswer } from '../../shared/http-request';

/**
 * The JSON-RPC that Bitcoin Core and bcoin share: POST of one call or a batch, HTTP basic auth from
 * the URL's user and password (Core's rpcuser/rpcpassword, bcoin's API key as the password).
 * Errors leave as one short line naming the method and the reason, never the node's URL, which may
 * carry credentials.
 */
export interface RpcCall {
  method: string;
  params: unknown[];
}

export class BitcoinRpcError extends Error {
  constructor(
    readonly method: string,
    readonly rpcCode: number | null,
    reason: string,
  ) {
    super(`bitcoin node ${method}: ${reason.slice(0, 200)}`);
    this.name = 'BitcoinRpcError';
  }
}

/** One answer of a batch: its result, or the node's error for that call. */
export type RpcOutcome = { ok: true; result: unknown } | { ok: false; error: BitcoinRpcError };

interface RpcReply {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
}

export class BitcoinRpc {
  private readonly endpoint: string;
  private readonly authorization: string | null;

  constructor(
    rpcUrl: string,
    private readonly timeoutMs: number,
  ) {
    const url = new URL(rpcUrl);
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    url.username = '';
    url.password = '';
    this.endpoint = url.toString();
    this.authorization = user || password ? `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` : null;
  }

  async call<T>(method: string, params: unknown[] = [], signal?: AbortSignal): Promise<T> {
    const [outcome] = await this.batch([{ method, params }], signal);
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.result as T;
  }

  /** Every call's result, throwing the first error. */
  async all<T>(calls: RpcCall[], signal?: AbortSignal): Promise<T[]> {
    return (await this.batch(calls, signal)).map((o) => {
      if (!o.ok) throw o.error;
      return o.result as T;
    });
  }

  /** The calls in one HTTP request; each answer in the order of `calls`. */
  async batch(calls: RpcCall[], signal?: AbortSignal): Promise<RpcOutcome[]> {
    if (calls.length === 0) return [];
    const label = calls.length === 1 ? calls[0]!.method : `${calls[0]!.method} (batch of ${calls.length})`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.authorization) headers.authorization = this.authorization;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const body = JSON.stringify(calls.map((c, id) => ({ jsonrpc: '1.0', id, method: c.method, params: c.params })));
    // A redirect is not followed (it would send the credentials elsewhere): its answer is not JSON.
    const send = () => httpRequest(this.endpoint, { method: 'POST', headers, body, signal: signal ? AbortSignal.any([timeout, signal]) : timeout });
    let res: HttpAnswer;
    try {
      // A kept-alive connection the node closed just as the request went out fails at once; every
      // call here may be sent twice (reads, and a rebroadcast of the same transaction), so once more.
      res = await send().catch((err: unknown) => (isConnectionReset(err) && !timeout.aborted && !signal?.aborted ? send() : Promise.reject(err)));
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new BitcoinRpcError(label, null, timeout.aborted ? `timed out after ${this.timeoutMs} ms` : causeOf(err));
    }
    if (res.status === 401 || res.status === 403) throw new BitcoinRpcError(label, null, `HTTP ${res.status}: the node refused the RPC credentials`);
    let replies: unknown;
    try {
      replies = JSON.parse(res.text);
    } catch {
      throw new BitcoinRpcError(label, null, `HTTP ${res.status}: the answer is not JSON`);
    }
    // Bitcoin Core answers a batch with an array even when a call failed; a lone error object means the batch itself was refused.
    if (!Array.isArray(replies)) {
      const e = (replies as RpcReply | null)?.error;
      throw new BitcoinRpcError(label, null, typeof e?.message === 'string' ? e.message : `HTTP ${res.status}: not a batch answer`);
    }
    const byId = new Map<number, RpcReply>();
    for (const r of replies as RpcReply[]) if (typeof r?.id === 'number') byId.set(r.id, r);
    return calls.map((c, id): RpcOutcome => {
      const r = byId.get(id);
      if (!r) return { ok: false, error: new BitcoinRpcError(c.method, null, 'no answer in the batch') };
      if (r.error) {
        const code = typeof r.error.code === 'number' ? r.error.code : null;
        return { ok: false, error: new BitcoinRpcError(c.method, code, typeof r.error.message === 'string' ? r.error.message : 'error') };
      }
      return { ok: true, result: r.result };
    });
  }
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return `request failed (${cause.code})`;
  return 'request failed';
}
