/**
 * A black-box HTTP client for the merchant API: raw node:http (no agent, nothing re-encoded), so a
 * test controls the exact target, headers and body bytes, and may send from another loopback
 * source address (127.0.0.x) to act as a different client IP. Signing uses test/helpers/signer.ts.
 */
import http from 'node:http';
import { checkAgainstOpenApi } from './openapi-check';
import { signRequest } from './signer';

export interface ApiResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with chunked transfer encoding (no Content-Length). */
  chunked?: boolean;
  /** Local source address, e.g. 127.0.0.7 (the server sees it as the client IP). */
  from?: string;
}

/** One request to `base + target`; the target is sent exactly as given. */
export function call(base: string, target: string, opts: CallOptions = {}): Promise<ApiResponse> {
  const url = new URL(base);
  const body = opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(opts.body, 'utf8');
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (body !== undefined && !opts.chunked) headers['Content-Length'] = String(body.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      { host: url.hostname, port: url.port, method: opts.method ?? 'GET', path: target, headers, agent: false, localAddress: opts.from },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          try {
            checkAgainstOpenApi(opts.method ?? 'GET', target, res.statusCode ?? 0, res.headers['content-type'], text);
          } catch (err) {
            reject(err);
            return;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    // The server may answer (413) and close before the whole body is written: that is expected.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (body === undefined) req.end();
    else if (opts.chunked) {
      const step = 64 * 1024;
      for (let i = 0; i < body.length; i += step) req.write(body.subarray(i, i + step));
      req.end();
    } else req.end(body);
  });
}

/**
 * Signs and sends requests for one key. Every call gets a timestamp of its own (the clock's second,
 * or the nearest later second not yet used by this client, never more than 250 s ahead) so
 * identical requests in one second never share a signature and replay protection does not refuse
 * them, as SPEC asks of a client ("sign again"). Later, not earlier: after a crash the daemon
 * refuses every signature timestamped up to its start (the replay guard was not saved).
 */
export class SignedClient {
  private readonly used = new Set<number>();

  constructor(
    readonly base: string,
    readonly keyId: string,
    readonly secret: string,
    private readonly clock: { now(): Date } = { now: () => new Date() },
  ) {}

  timestamp(): number {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    for (const u of this.used) if (u < now - 300) this.used.delete(u);
    const ts = this.firstFree(now);
    if (ts > now + 250) throw new Error('SignedClient: 250 signed requests ahead of the clock; wait or advance the clock');
    this.used.add(ts);
    return ts;
  }

  headers(method: string, target: string, body?: string, extra: { secret?: string; timestamp?: number | string } = {}): Record<string, string> {
    return signRequest({
      keyId: this.keyId,
      secret: extra.secret ?? this.secret,
      method,
      target,
      body,
      timestamp: extra.timestamp ?? this.timestamp(),
    });
  }

  /** The first second from `now` on that this client has not signed with. */
  private firstFree(now: number): number {
    let ts = now;
    while (this.used.has(ts)) ts++;
    return ts;
  }

  /** Set once the clock is seen standing still over a second of real time (a test's fake clock). */
  private clockStands = false;

  /**
   * A poll repeating requests many times a second signs ever further ahead of the clock. On a clock
   * that moves, a request 200 s ahead waits for it (a second at a time), so a long poll keeps pace
   * instead of running into the 250 s limit (bursts below that are left alone: rate-limit tests
   * send them); a fake clock is the test's to advance.
   */
  private async pace(): Promise<void> {
    while (!this.clockStands) {
      const now = Math.floor(this.clock.now().getTime() / 1000);
      if (this.firstFree(now) <= now + 200) return;
      const before = this.clock.now().getTime();
      await new Promise((r) => setTimeout(r, 1000));
      if (this.clock.now().getTime() - before < 500) this.clockStands = true;
    }
  }

  async request(
    method: string,
    target: string,
    opts: { body?: string; headers?: Record<string, string>; from?: string; secret?: string; timestamp?: number | string } = {},
  ): Promise<ApiResponse> {
    if (opts.timestamp === undefined) await this.pace();
    const headers = { ...this.headers(method, target, opts.body, opts), ...(opts.headers ?? {}) };
    return call(this.base, target, { method, headers, body: opts.body, from: opts.from });
  }

  get(target: string, opts: { headers?: Record<string, string>; from?: string; secret?: string } = {}): Promise<ApiResponse> {
    return this.request('GET', target, opts);
  }

  post(target: string, body: unknown, opts: { headers?: Record<string, string>; from?: string } = {}): Promise<ApiResponse> {
    return this.request('POST', target, { ...opts, body: typeof body === 'string' ? body : JSON.stringify(body) });
  }
}

/** Distinct loopback source addresses per test so per-IP counters never mix between tests. */
let nextHost = 10;
export const freshSourceIp = (): string => `127.0.0.${nextHost++}`;
