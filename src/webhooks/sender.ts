import { createSecretKey, type KeyObject } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { TargetRefusedError, type TargetGuard } from '../shared/target-guard';
import { unixSeconds } from '../shared/clock';
import { signWebhook } from './verify';

/** SPEC "Events": the receiver answers 2xx within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const WEBHOOK_USER_AGENT = 'Service-Webhooks/1.0';

export interface OutgoingEvent {
  id: string;
  type: string;
  /** The body exactly as the outbox stored it: sent and signed byte for byte. */
  body: string;
}

export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  /** Why the attempt failed, for the delivery log; never a secret, a signature or an address. */
  error: string | null;
  durationMs: number;
  /** false: the attempt never started (it waited on the sender thread at a stop or a change) and goes back unsent. */
  sent?: false;
}

/** What the dispatcher sends with: the sender itself, or the same sender run on its own thread (sender-thread.ts). */
export interface AttemptSender {
  /** `target` is the dispatcher's key for the bounds (an endpoint, or one invoice webhook_url). */
  post(url: string, event: OutgoingEvent, secret: string, now: Date, signal?: AbortSignal, target?: string): Promise<AttemptResult>;
  /** How many times its bounds the dispatcher may hand over (a sender that keeps the bounds itself queues the rest); 1 if absent. */
  readonly window?: number;
  /** A target changed: attempts handed over and not yet started come back with `sent: false`. */
  cancel?(target: string): void;
  close(): void;
}

export interface SenderOptions {
  /** Tests shorten it; the daemon uses DELIVERY_TIMEOUT_MS. */
  timeoutMs?: number;
}

/**
 * One signed POST of an event to a target. The target guard runs at every attempt: on the scheme,
 * on an IP literal before connecting, and inside the connection's own DNS lookup, so the address
 * checked is the address connected to (a name that re-resolves to a private address is refused).
 * Redirects are never followed: a 3xx is a failed attempt like any non-2xx.
 */
export class WebhookSender implements AttemptSender {
  private readonly timeoutMs: number;
  /** Targets parsed once: a URL parse and its conversion to request options cost more than the signature. */
  private readonly targets = new Map<string, Target>();
  /** Signing keys made once per secret (importing the key is a good part of an HMAC's cost). */
  private readonly keys = new Map<string, KeyObject>();
  /** Requests in flight per stop signal: one listener per signal cuts them all short. */
  private readonly live = new Map<AbortSignal, Set<http.ClientRequest>>();
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly guard: TargetGuard, opts: SenderOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    // No socket cap per host: endpoints that share a host must not queue behind each other's slow
    // answers; the dispatcher bounds the attempts in flight.
    const agentOptions = { keepAlive: true };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
  }

  post(target: string, event: OutgoingEvent, secret: string, now: Date, signal?: AbortSignal): Promise<AttemptResult> {
    const started = process.hrtime.bigint();
    const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    const failed = (error: string, responseStatus: number | null = null): AttemptResult => ({ ok: false, responseStatus, error, durationMs: elapsed() });

    let url: Target;
    try {
      url = this.parse(target);
      if (!url.secure && !(this.guard.allowPrivate && url.protocol === 'http:')) {
        return Promise.resolve(failed('target refused: only https:// targets are allowed'));
      }
      this.guard.assertConnectable(url.hostname);
    } catch (err) {
      return Promise.resolve(failed(err instanceof TargetRefusedError ? err.message : 'the URL is not valid'));
    }

    const timestamp = String(unixSeconds(now));
    // Sent as a string: the client writes the head and a string body in one write.
    const body = event.body;
    const headers = {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body, 'utf8')),
      'User-Agent': WEBHOOK_USER_AGENT,
      'X-Event-Id': event.id,
      'X-Event-Type': event.type,
      'X-Timestamp': timestamp,
      'X-Signature': signWebhook(this.keyOf(secret), timestamp, body),
    };
    const secure = url.secure;

    return new Promise((resolve) => {
      let settled = false;
      const settle = (r: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        live?.delete(req);
        resolve(r);
      };
      const req = (secure ? https : http).request({
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        path: url.path,
        method: 'POST',
        headers,
        agent: secure ? this.httpsAgent : this.httpAgent,
        lookup: this.guard.lookup,
      });
      const timer = setTimeout(() => req.destroy(new TimeoutError()), this.timeoutMs);
      const live = signal ? this.liveFor(signal) : null;
      live?.add(req);
      if (signal?.aborted) req.destroy(new StoppedError());

      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        // The status decides; the rest of the answer is read and dropped so the connection can be reused.
        res.resume();
        res.on('error', () => undefined);
        if (status >= 200 && status < 300) settle({ ok: true, responseStatus: status, error: null, durationMs: elapsed() });
        else if (status >= 300 && status < 400) settle(failed(`the receiver answered ${status}; redirects are not followed`, status));
        else settle(failed(`the receiver answered ${status}`, status));
      });
      req.on('error', (err: NodeJS.ErrnoException) => settle(failed(describeError(err, this.timeoutMs))));
      req.end(body);
    });
  }

  private liveFor(signal: AbortSignal): Set<http.ClientRequest> {
    let set = this.live.get(signal);
    if (!set) {
      const requests = new Set<http.ClientRequest>();
      set = requests;
      this.live.set(signal, requests);
      signal.addEventListener(
        'abort',
        () => {
          this.live.delete(signal);
          for (const req of requests) req.destroy(new StoppedError());
        },
        { once: true },
      );
    }
    return set;
  }

  private keyOf(secret: string): KeyObject {
    let key = this.keys.get(secret);
    if (!key) {
      if (this.keys.size >= MAX_TARGETS_KEPT) this.keys.clear();
      key = createSecretKey(Buffer.from(secret, 'utf8'));
      this.keys.set(secret, key);
    }
    return key;
  }

  /** A target's parts, from the cache (kept small: targets are few, a full cache starts over). */
  private parse(target: string): Target {
    let t = this.targets.get(target);
    if (t) return t;
    const url = new URL(target);
    t = {
      protocol: url.protocol,
      secure: url.protocol === 'https:',
      // As Node's own conversion: brackets off an IPv6 literal for the connection.
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
    };
    if (this.targets.size >= MAX_TARGETS_KEPT) this.targets.clear();
    this.targets.set(target, t);
    return t;
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

interface Target {
  protocol: string;
  secure: boolean;
  hostname: string;
  port: number | undefined;
  path: string;
}

const MAX_TARGETS_KEPT = 1000;

class TimeoutError extends Error {}
class StoppedError extends Error {}

/** A transport failure in words; Node's messages can carry the address, so only known codes are named. */
function describeError(err: NodeJS.ErrnoException, timeoutMs: number): string {
  if (err instanceof TimeoutError) return `timeout: no answer within ${timeoutMs / 1000} s`;
  if (err instanceof StoppedError) return 'interrupted: the daemon stopped during the attempt';
  if (err instanceof TargetRefusedError) return err.message;
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was closed before an answer';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host cannot be reached';
    default:
      break;
  }
  if (err.message === 'socket hang up') return 'the connection was closed before an answer';
  if (typeof err.code === 'string' && /TLS|CERT|SSL|SELF_SIGNED|UNABLE_TO|DEPTH_ZERO|HOSTNAME/.test(err.code)) return `TLS error (${err.code})`;
  return `request failed${typeof err.code === 'string' ? ` (${err.code})` : ''}`;
}
