import http from 'node:http';
import https from 'node:https';

/** An HTTP answer, its body read whole. */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
  /** The body as UTF-8. */
  readonly text: string;
}

/**
 * A request that got no answer: refused, reset, timed out or aborted. As with fetch's TypeError,
 * the socket's error is the `cause` (its `code`: ECONNREFUSED, ECONNRESET, ...), so callers name
 * the reason without the URL.
 */
export class HttpRequestFailed extends Error {
  constructor(override readonly cause: Error & { code?: string }) {
    super('request failed');
    this.name = 'HttpRequestFailed';
  }
}

/** A kept-alive connection the server closed just as the request went out: nothing was answered, so an idempotent request may be sent again. */
export function isConnectionReset(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } }).cause?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * One HTTP request with node:http(s) on Node's global agents (kept-alive connections). The nodes'
 * RPC clients call it many times a second: fetch cost two to three times the CPU per request
 * (docs/benchmarks.md). A redirect is an answer like any other, never followed (a node that
 * redirects would otherwise get its credentials sent elsewhere). The body is sent with its length.
 */
export function httpRequest(
  url: string | URL,
  opts: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const target = typeof url === 'string' ? new URL(url) : url;
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    const method = opts.method ?? 'GET';
    const headers: Record<string, string | number> = { ...opts.headers };
    if (body || (method !== 'GET' && method !== 'HEAD')) headers['content-length'] = body?.length ?? 0;
    const fail = (err: Error) => reject(new HttpRequestFailed(err));
    const request = (target.protocol === 'https:' ? https : http).request(target, { method, headers, signal: opts.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      // A connection closed in the middle of the answer (no 'end' comes then).
      res.on('close', () => res.complete || fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes,
          get text() {
            return bytes.toString('utf8');
          },
        });
      });
    });
    request.on('error', fail);
    request.end(body);
  });
}

/** A header's value (the first of a repeated one), or null. */
export function headerOf(headers: http.IncomingHttpHeaders, name: string): string | null {
  const value = headers[name.toLowerCase()];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}
