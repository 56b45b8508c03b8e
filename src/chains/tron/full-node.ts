import { headerOf, httpRequest } from '../../shared/http-request';
import { NodeFault, NodeUnavailable } from '../types';
import { parseExactJson } from './exact-json';

/** What java-tron's LiteFnQueryHttpFilter writes (plain text, HTTP 200) for a history query on a Lite FullNode. */
const LITE_CLOSED = /closed because this node is a lite fullnode/i;
/** The reason `coinkeep status` and `doctor` give for such a node (PRODUCT §15: not supported). */
export const LITE_NODE_REASON = 'Tron node is a Lite FullNode with history queries closed: set node.openHistoryQueryWhenLiteFN = true or use a full node';
/** java-tron's answers about itself, not about what was asked: its rate limiter, a node still starting or syncing. */
const NODE_BUSY = /lack of computing resources|too many requests|rate limit|server is busy|service unavailable|node is syncing/i;
/** HTTP statuses of a hosted node over its quota or unable to answer now (TronGrid: 403, 429, 503). */
const QUOTA_STATUSES = new Set([403, 429, 503]);
const UNAVAILABLE_STATUSES = new Set([408, 425, 500, 502, 504]);

/**
 * A Tron full node's HTTP API (`/wallet/...`, JSON POST bodies) over node:http(s), each request
 * bounded by the chain's rpc_timeout_ms and the caller's AbortSignal, with a hosted node's API key
 * in the `TRON-PRO-API-KEY` header. Answers are parsed with big integers kept exact. What the node
 * says about itself (unreachable, timed out, over quota, its rate limiter) is NodeUnavailable; a
 * Lite FullNode's closed history is NodeFault naming the fix. Errors leave as one short line naming
 * the endpoint and the reason, never the node's URL or the key.
 */
export class TronFullNode {
  private readonly base: string;
  private readonly headers: Record<string, string> = { 'Content-Type': 'application/json' };

  constructor(
    fullNodeUrl: string,
    private readonly timeoutMs: number,
    apiKey?: string,
  ) {
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
    let retryAfter: string | null;
    try {
      // A redirect is not followed (the API key would go elsewhere): it is an HTTP error below.
      const res = await httpRequest(`${this.base}/wallet/${endpoint}`, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      status = res.status;
      retryAfter = headerOf(res.headers, 'retry-after');
      text = res.text;
    } catch (err) {
      signal?.throwIfAborted();
      throw new NodeUnavailable(`${what}: ${timeout.aborted ? 'timed out' : unreachable(err)}`);
    }
    if (QUOTA_STATUSES.has(status)) throw new NodeUnavailable(`${what}: HTTP ${status}, over its request quota or busy`, retryAfterMs(retryAfter), true);
    if (UNAVAILABLE_STATUSES.has(status)) throw new NodeUnavailable(`${what}: HTTP ${status}`, retryAfterMs(retryAfter));
    if (status !== 200) throw new NodeUnavailable(`${what}: HTTP ${status}`);
    let parsed: unknown;
    try {
      parsed = parseExactJson(text);
    } catch {
      if (LITE_CLOSED.test(text)) throw new NodeFault(LITE_NODE_REASON);
      if (NODE_BUSY.test(text)) throw new NodeUnavailable(`${what}: ${text.replace(/\s+/g, ' ').trim().slice(0, 120)}`, retryAfterMs(retryAfter), true);
      throw new NodeUnavailable(`${what}: the answer is not JSON`);
    }
    const error = (parsed as { Error?: unknown } | null)?.Error;
    if (error !== undefined) {
      const message = `${what}: ${String(error).slice(0, 200)}`;
      if (NODE_BUSY.test(String(error))) throw new NodeUnavailable(message, retryAfterMs(retryAfter), true);
      throw new Error(message);
    }
    return parsed as T;
  }
}

/** Retry-After in seconds or as an HTTP date, in ms; null when absent or unreadable. */
function retryAfterMs(value: string | null): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

function unreachable(err: unknown): string {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return code ? `unreachable (${code})` : 'unreachable';
}
