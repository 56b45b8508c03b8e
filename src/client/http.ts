import { randomUUID } from 'node:crypto';
import { CoinkeepConnectionError, CoinkeepError } from './errors';
import { CLIENT_ROUTES, type RouteName } from './routes';
import { canonicalString, requestSignature } from './signing';

export interface ClientOptions {
  /** The API's base URL, e.g. https://pay.example.com */
  baseUrl: string;
  /** The key id (`ck_live_...` or `ck_test_...`). */
  keyId: string;
  /** The key's secret: stays on the merchant's server. */
  secret: string;
  /** Retries after the first attempt (network errors, 409 idempotency.in_progress, 429, 5xx). Default 3. */
  maxRetries?: number;
  /** First backoff in ms, doubled per retry, with jitter. Default 500. */
  initialDelayMs?: number;
  /** Longest wait between attempts in ms (also caps Retry-After). Default 20000. */
  maxDelayMs?: number;
  /** Per-attempt timeout in ms. Default 30000. */
  timeoutMs?: number;
  /** Replaces the global fetch (tests, proxies). */
  fetch?: typeof fetch;
  /** Unix time in ms (tests). */
  now?: () => number;
  /** How the client waits between attempts (tests). */
  sleep?: (ms: number) => Promise<void>;
}

export interface CallOptions {
  path?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** POST only: the Idempotency-Key; one is made when absent. Kept across every retry of the call. */
  idempotencyKey?: string;
}

const RETRYABLE_STATUS = (status: number, code: string | undefined): boolean =>
  status === 429 || status >= 500 || (status === 409 && code === 'idempotency.in_progress');

/**
 * Signs and sends one API call with its retries. Each attempt is signed again with a timestamp no
 * earlier than the last one used for the same request, so a retry within one second never repeats a
 * signature (SPEC: an accepted signature is refused afterwards as a replay).
 */
export class Transport {
  private readonly lastTimestamp = new Map<string, number>();
  private readonly opts: Required<Omit<ClientOptions, 'fetch'>> & { fetch: typeof fetch };

  constructor(options: ClientOptions) {
    if (!options.baseUrl || !options.keyId || !options.secret) throw new TypeError('baseUrl, keyId and secret are required');
    this.opts = {
      maxRetries: 3,
      initialDelayMs: 500,
      maxDelayMs: 20_000,
      timeoutMs: 30_000,
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    };
  }

  async call<T>(name: RouteName, options: CallOptions = {}): Promise<T> {
    const [method, template] = CLIENT_ROUTES[name];
    const target = targetOf(template, options);
    const body = options.body === undefined ? '' : JSON.stringify(options.body);
    const idempotencyKey = method === 'POST' ? (options.idempotencyKey ?? randomUUID()) : null;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.opts.maxRetries;
      let res: Response;
      try {
        res = await this.send(method, target, body, idempotencyKey);
      } catch (err) {
        if (last) throw new CoinkeepConnectionError(`${method} ${target}: ${err instanceof Error ? err.message : String(err)}`, err);
        await this.opts.sleep(this.backoff(attempt));
        continue;
      }
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? null : JSON.parse(text);
      } catch {
        if (!last && res.status >= 500) {
          await this.opts.sleep(this.backoff(attempt));
          continue;
        }
        throw new CoinkeepConnectionError(`${method} ${target}: answered ${res.status} without JSON`);
      }
      if (res.ok) return json as T;
      const error = (json as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;
      if (!last && RETRYABLE_STATUS(res.status, error?.code)) {
        await this.opts.sleep(this.waitAfter(res, attempt));
        continue;
      }
      throw new CoinkeepError(res.status, error?.code ?? 'unknown', error?.message ?? `HTTP ${res.status}`, error?.details ?? {}, idempotencyKey);
    }
  }

  private async send(method: string, target: string, body: string, idempotencyKey: string | null): Promise<Response> {
    const timestamp = String(this.timestampFor(`${method} ${target} ${body}`));
    const headers: Record<string, string> = {
      'X-API-Key': this.opts.keyId,
      'X-Timestamp': timestamp,
      'X-Signature': requestSignature(this.opts.secret, canonicalString(timestamp, method, target, body)),
      'X-API-Version': 'v1',
      Accept: 'application/json',
    };
    if (body !== '') headers['Content-Type'] = 'application/json';
    if (idempotencyKey !== null) headers['Idempotency-Key'] = idempotencyKey;
    return this.opts.fetch(this.opts.baseUrl + target, {
      method,
      headers,
      body: body === '' ? undefined : body,
      signal: AbortSignal.timeout(this.opts.timeoutMs),
    });
  }

  /** The current second, or the one after the last used for this very request. */
  private timestampFor(request: string): number {
    const now = Math.floor(this.opts.now() / 1000);
    if (this.lastTimestamp.size > 1000) for (const [k, ts] of this.lastTimestamp) if (ts < now - 300) this.lastTimestamp.delete(k);
    const prev = this.lastTimestamp.get(request);
    const ts = prev !== undefined && prev >= now ? prev + 1 : now;
    this.lastTimestamp.set(request, ts);
    return ts;
  }

  /** Exponential backoff with full jitter between half and the whole step. */
  private backoff(attempt: number): number {
    const step = Math.min(this.opts.maxDelayMs, this.opts.initialDelayMs * 2 ** attempt);
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  /** Retry-After (seconds) when the server names it, else the backoff. */
  private waitAfter(res: Response, attempt: number): number {
    const header = Number(res.headers.get('Retry-After'));
    if (Number.isFinite(header) && header >= 0 && res.headers.has('Retry-After')) return Math.min(this.opts.maxDelayMs, header * 1000);
    return this.backoff(attempt);
  }
}

function targetOf(template: string, options: CallOptions): string {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = options.path?.[name];
    if (v === undefined || v === '') throw new TypeError(`${name} is required`);
    return encodeURIComponent(v);
  });
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) query.append(k, String(v));
  const qs = query.toString();
  return qs === '' ? path : `${path}?${qs}`;
}
