/**
 * The seam between the delivery loop and the wire. The loop hands over a signed POST and gets its
 * outcome back; everything that bounds an attempt stays behind the seam: the SSRF guard pinned
 * into the connection's DNS lookup, the timeout, the cap on the answer read, and (for the thread
 * transport) the thread and the bounds on attempts in flight. No secret crosses it.
 *
 *   http-transport.ts    one bounded POST on this thread (tests that bring their own resolver)
 *   thread-transport.ts  the same POSTs on a thread of their own (the daemon)
 */

/** A signed POST, ready to go (delivery-signer.ts makes it). */
export interface WebhookPost {
  url: string;
  /** Every header of the request, X-Signature included. */
  headers: Record<string, string>;
  /** The event's body exactly as the outbox stored it: sent byte for byte as it was signed. */
  body: string;
  /** The dispatcher's keys for the bounds: an endpoint or one invoice webhook_url, and its account. */
  target: string;
  account: string;
}

export interface AttemptResult {
  ok: boolean;
  responseStatus: number | null;
  /** Why the attempt failed, for the delivery log; never a secret, a signature or an address. */
  error: string | null;
  durationMs: number;
  /** false: the attempt never started (it waited behind the seam at a stop or a change) and goes back unsent. */
  sent?: false;
}

export interface WebhookTransport {
  /**
   * How many times its bounds the dispatcher may hand over: 1 for a transport that starts what it
   * is given, more for one that keeps the bounds itself and queues the rest.
   */
  readonly window: number;
  /** Sends one POST; the signal cuts it short (the attempt is then recorded as interrupted). */
  post(post: WebhookPost, signal?: AbortSignal): Promise<AttemptResult>;
  /** A target changed: its posts handed over and not yet started come back with `sent: false`. */
  cancel(target: string): void;
  close(): void;
}

/** The error of an attempt a stop cut short (or that a crash left without an outcome). */
export const INTERRUPTED = 'interrupted: the daemon stopped during the attempt';

/** The answer for a post that waited behind the seam and never started (a stop, or its target changed). */
export const NOT_SENT: AttemptResult = { ok: false, responseStatus: null, error: 'not sent', durationMs: 0, sent: false };
