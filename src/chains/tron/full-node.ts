/**
 * A Tron full node's HTTP API (`/wallet/...`, JSON POST bodies) over Node's fetch, each request
 * bounded by the chain's rpc_timeout_ms and the caller's AbortSignal, with a hosted node's API key
 * in the `TRON-PRO-API-KEY` header. Errors leave as one short line naming the endpoint and the
 * reason, never the node's URL or the key.
 */
export class TronFullNode {
  private readonly base: string;
  private readonly headers: Record<string, string> = { 'Content-Type': 'application/json' };

  constructor(fullNodeUrl: string, private readonly timeoutMs: number, apiKey?: string) {
    this.base = fullNodeUrl.replace(/\/+$/, '');
    if (apiKey) this.headers['TRON-PRO-API-KEY'] = apiKey;
  }

  /**
   * POSTs `body` to `/wallet/<endpoint>`; java-tron answers a refused request with HTTP 200 and an
   * `Error` field, which fails here like an HTTP error.
   */
  async post<T>(endpoint: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    const what = `tron node ${endpoint}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let text: string;
    let status: number;
    try {
      const res = await fetch(`${this.base}/wallet/${endpoint}`, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: 'error',
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      signal?.throwIfAborted();
      throw new Error(`${what}: ${timeout.aborted ? 'timed out' : unreachable(err)}`);
    }
    if (status !== 200) throw new Error(`${what}: HTTP ${status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${what}: the answer is not JSON`);
    }
    const error = (parsed as { Error?: unknown } | null)?.Error;
    if (error !== undefined) throw new Error(`${what}: ${String(error).slice(0, 200)}`);
    return parsed as T;
  }
}

function unreachable(err: unknown): string {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return code ? `unreachable (${code})` : 'unreachable';
}
