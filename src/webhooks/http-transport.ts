import type { Agent, Dispatcher } from 'undici';
import { TargetRefusedError, type TargetGuard } from '../shared/target-guard';
import { INTERRUPTED, type AttemptResult, type WebhookPost, type WebhookTransport } from './transport';

/** SPEC "Events": the receiver answers 2xx within 10 seconds. */
export const DELIVERY_TIMEOUT_MS = 10_000;

export interface HttpTransportOptions {
  /** Tests shorten it; the daemon uses DELIVERY_TIMEOUT_MS. */
  timeoutMs?: number;
}

const MAX_TARGETS_KEPT = 1000;
/** An answer's body is read and dropped (so the connection can be reused) up to this; past it the connection is closed. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * One bounded POST on this thread. The target guard runs at every attempt: on the scheme, on an IP
 * literal before connecting, and inside the connection's own DNS lookup, so the address checked is
 * the address connected to (a name that re-resolves to a private address is refused). Redirects
 * are never followed: a 3xx is a failed attempt like any non-2xx. An attempt ends at its timeout,
 * and an answer longer than MAX_ANSWER_BYTES closes the connection. It starts whatever it is
 * given: the dispatcher bounds the attempts in flight (window 1).
 */
export class HttpTransport implements WebhookTransport {
  readonly window = 1;
  private readonly timeoutMs: number;
  /** Targets parsed once: a URL parse and its conversion to request options cost more than the signature. */
  private readonly targets = new Map<string, Target>();
  /** Requests in flight per stop signal: one listener per signal cuts them all short. */
  private readonly live = new Map<AbortSignal, Set<Attempt>>();
  /**
   * undici's client, which costs less CPU per request than node:http (docs/benchmarks.md). Its
   * connections go through the guard's lookup, so the address checked is the address connected
   * to. No cap per origin: endpoints that share a host must not queue behind each other's slow
   * answers; the dispatcher bounds the attempts in flight.
   */
  private readonly agent: Agent;

  constructor(
    private readonly guard: TargetGuard,
    opts: HttpTransportOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    // undici is loaded where a transport is made (the delivery thread by default), not by every module that names this one.
    const { Agent } = require('undici') as typeof import('undici');
    this.agent = new Agent({
      connect: { lookup: guard.lookup, timeout: this.timeoutMs },
      // The attempt's own timer decides; these only keep undici from cutting it shorter.
      headersTimeout: this.timeoutMs + 1000,
      bodyTimeout: this.timeoutMs + 1000,
      keepAliveTimeout: 4000,
    });
  }

  post(post: WebhookPost, signal?: AbortSignal): Promise<AttemptResult> {
    const started = process.hrtime.bigint();
    const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    const failed = (error: string, responseStatus: number | null = null): AttemptResult => ({ ok: false, responseStatus, error, durationMs: elapsed() });

    let url: Target;
    try {
      url = this.parse(post.url);
      if (!url.secure && !(this.guard.allowPrivate && url.protocol === 'http:')) {
        return Promise.resolve(failed('target refused: only https:// targets are allowed'));
      }
      this.guard.assertConnectable(url.hostname);
    } catch (err) {
      return Promise.resolve(failed(err instanceof TargetRefusedError ? err.message : 'the URL is not valid'));
    }

    const answered = (status: number): AttemptResult => {
      if (status >= 200 && status < 300) return { ok: true, responseStatus: status, error: null, durationMs: elapsed() };
      if (status >= 300 && status < 400) return failed(`the receiver answered ${status}; redirects are not followed`, status);
      return failed(`the receiver answered ${status}`, status);
    };
    return new Promise((resolve) => {
      const attempt = new Attempt((outcome) => {
        clearTimeout(timer);
        live?.delete(attempt);
        resolve(typeof outcome === 'number' ? answered(outcome) : failed(describeError(outcome, this.timeoutMs)));
      });
      // An attempt is cut short by its own timer or by a stop, without an AbortSignal per request
      // (costly in undici: docs/benchmarks.md, webhooks).
      const timer = setTimeout(() => attempt.abort(new TimeoutError()), this.timeoutMs);
      const live = signal ? this.liveFor(signal) : null;
      live?.add(attempt);
      if (signal?.aborted) {
        attempt.abort(new StoppedError());
        return;
      }
      try {
        this.agent.dispatch({ origin: url.origin, path: url.path, method: 'POST', headers: post.headers, body: post.body }, attempt);
      } catch (err) {
        attempt.abort(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /** Nothing waits here: every post starts at once. */
  cancel(): void {}

  close(): void {
    void this.agent.destroy().catch(() => undefined);
  }

  private liveFor(signal: AbortSignal): Set<Attempt> {
    let set = this.live.get(signal);
    if (!set) {
      const requests = new Set<Attempt>();
      set = requests;
      this.live.set(signal, requests);
      signal.addEventListener(
        'abort',
        () => {
          this.live.delete(signal);
          for (const a of requests) a.abort(new StoppedError());
        },
        { once: true },
      );
    }
    return set;
  }

  /** A target's parts, from the cache (kept small: targets are few, a full cache starts over). */
  private parse(target: string): Target {
    let t = this.targets.get(target);
    if (t) return t;
    const url = new URL(target);
    t = {
      protocol: url.protocol,
      origin: `${url.protocol}//${url.host}`,
      secure: url.protocol === 'https:',
      // The guard checks an IPv6 literal without its brackets.
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      path: `${url.pathname}${url.search}`,
    };
    if (this.targets.size >= MAX_TARGETS_KEPT) this.targets.clear();
    this.targets.set(target, t);
    return t;
  }
}

interface Target {
  protocol: string;
  /** Scheme, host (an IPv6 literal in brackets) and port, as the client takes them. */
  origin: string;
  secure: boolean;
  hostname: string;
  path: string;
}

/**
 * One attempt's exchange as undici's dispatcher drives it: it ends at the answer's status line
 * (the status decides; the rest of the answer is read and dropped), at a transport error, or when
 * cut short (its timeout, a stop), whichever comes first; only the first counts.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private cut: Error | null = null;
  private ended = false;
  private received = 0;

  /** `outcome`: the answer's status, or why there was none. */
  constructor(private readonly finish: (outcome: number | Error) => void) {}

  /** Ends the attempt now; its request is aborted as soon as it has one (it may still be connecting). */
  abort(reason: Error): void {
    if (this.cut) return;
    this.cut = reason;
    this.controller?.abort(reason);
    this.end(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cut) controller.abort(this.cut);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // An informational answer (1xx) is not the answer.
    if (statusCode >= 200) this.end(statusCode);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length;
    if (this.received > MAX_ANSWER_BYTES) controller.abort(new AnswerTooLongError());
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.end(err);
  }

  private end(outcome: number | Error): void {
    if (this.ended) return;
    this.ended = true;
    this.finish(outcome);
  }
}

class TimeoutError extends Error {}
class StoppedError extends Error {}
class AnswerTooLongError extends Error {}

/** A transport failure in words; Node's messages can carry the address, so only known codes are named. */
function describeError(err: NodeJS.ErrnoException, timeoutMs: number): string {
  if (err instanceof TimeoutError) return `timeout: no answer within ${timeoutMs / 1000} s`;
  if (err instanceof StoppedError) return INTERRUPTED;
  if (err instanceof TargetRefusedError) return err.message;
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return 'the connection was closed before an answer';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
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
