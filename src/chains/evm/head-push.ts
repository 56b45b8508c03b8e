import type { Logger } from '../../shared/logger';
import { WsClient } from '../../shared/ws-client';

/** The first pause before connecting again; it doubles after each failure up to MAX_BACKOFF_MS. */
export const MIN_BACKOFF_MS = 250;
export const MAX_BACKOFF_MS = 30_000;
/** A connection nothing came over for this long is pinged; one that then stays silent as long again is dropped and made anew. */
export const PING_EVERY_MS = 10_000;
/** A head the poll read and the push did not announce within this long: the subscription went silent, it is made anew. */
export const SILENT_AFTER_MS = 30_000;

/** What a pushed head tells: only a hint that the node may have a new block (the poll reads the truth). */
export interface PushedHead {
  height: number;
  hash: string;
}

export interface HeadPushTiming {
  /** Backoff of reconnects: from minMs, doubling to maxMs (with jitter). */
  minMs: number;
  maxMs: number;
  /** Liveness: a ping after this long without a frame; no frame for as long after it drops the connection. */
  pingEveryMs: number;
  /** A polled head not pushed within this long drops the connection (a subscription silent behind live pongs). */
  silentAfterMs: number;
}

const DEFAULT_TIMING: HeadPushTiming = { minMs: MIN_BACKOFF_MS, maxMs: MAX_BACKOFF_MS, pingEveryMs: PING_EVERY_MS, silentAfterMs: SILENT_AFTER_MS };

/**
 * An EVM node's new heads pushed over WebSocket (`ws_url`: `eth_subscribe` to `newHeads`): each
 * one calls `onHead`, which wakes the chain's scanner at once. Polling stays the fallback and the
 * truth: a head pushed here is never recorded, the scanner reads the tip and the blocks over
 * JSON-RPC as it always does, so a head the node then does not serve (a lying or racing push)
 * changes nothing. A dropped or refused connection is tried again after a pause that doubles from
 * minMs to maxMs (with jitter), back to the shortest once a head arrives (a server that accepts and drops at once is not hammered); each
 * subscription made wakes the scanner once (heads may have been missed meanwhile).
 *
 * A connection can die without closing (a NAT or proxy that forgot it, a node that stopped
 * answering): when nothing arrived for pingEveryMs it is pinged, and when still nothing arrived
 * pingEveryMs later it is dropped and made anew. A subscription can also go silent behind a live
 * connection (the node still answers pings but pushes no heads): when a poll reads a head the push
 * did not announce within silentAfterMs (polledTip), the connection is made anew too.
 */
export class HeadPush {
  private client: WsClient | null = null;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private pingSentAt = 0;
  private onHead: ((head: PushedHead | null) => void) | null = null;
  /** The highest head pushed; and the lowest polled head above it, with when the poll first read it. */
  private pushedHeight = -1;
  private unpushed: { height: number; since: number } | null = null;
  /**
   * The highest head polled, and the one polled when the subscription was made (or first after it):
   * a subscription announces only blocks newer than it, so a quiet chain's tip is no silence.
   */
  private polledHeight = -1;
  private polledFloor: number | null = null;
  /** Connections made (a reconnect counts), subscriptions confirmed, heads received, connections dropped as dead or silent: for tests and status. */
  readonly counts = { connects: 0, subscriptions: 0, heads: 0, dropped: 0 };
  private readonly timing: HeadPushTiming;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
    timing: Partial<HeadPushTiming> = {},
  ) {
    this.timing = { ...DEFAULT_TIMING, ...timing };
  }

  /** Starts listening; `onHead` is called for each head pushed, and with null when a subscription is made (heads may have been missed). */
  start(onHead: (head: PushedHead | null) => void): void {
    this.onHead = onHead;
    this.stopped = false;
    void this.connect();
    if (!this.watchdog) {
      this.watchdog = setInterval(() => this.check(), Math.max(10, Math.floor(this.timing.pingEveryMs / 2)));
      this.watchdog.unref();
    }
  }

  get connected(): boolean {
    return this.client?.isOpen === true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    this.client?.close();
    this.client = null;
  }

  /** A head the poll read from the node (the truth): one the push does not announce in time means a silent subscription. */
  polledTip(height: number): void {
    this.polledHeight = Math.max(this.polledHeight, height);
    this.polledFloor ??= height;
    if (height <= Math.max(this.pushedHeight, this.polledFloor) || this.unpushed !== null) return;
    this.unpushed = { height, since: Date.now() };
  }

  /** The watchdog's tick: pings an idle connection, drops a dead or silent one. */
  private check(): void {
    const client = this.client;
    if (this.stopped || !client?.isOpen) return;
    const now = Date.now();
    if (this.unpushed && now - this.unpushed.since > this.timing.silentAfterMs) {
      return this.drop(client, `no head pushed for ${this.unpushed.height} within ${this.timing.silentAfterMs} ms of the poll reading it`);
    }
    const idle = now - client.lastHeardAt;
    if (this.pingSentAt > client.lastHeardAt) {
      if (now - this.pingSentAt >= this.timing.pingEveryMs) this.drop(client, `no answer to a ping within ${this.timing.pingEveryMs} ms`);
      return;
    }
    if (idle >= this.timing.pingEveryMs) {
      this.pingSentAt = now;
      try {
        client.ping();
      } catch {
        // closing already: onClose retries
      }
    }
  }

  /** Closes a connection found dead or silent; its onClose connects again. */
  private drop(client: WsClient, reason: string): void {
    this.counts.dropped++;
    this.log.warn('new-head push silent; polling goes on, reconnecting', { reason });
    client.close();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let subscription: string | null = null;
    try {
      const client = await WsClient.connect(this.url, {
        onMessage: (text) => {
          let msg: { id?: number; result?: unknown; method?: string; params?: { subscription?: string; result?: { number?: string; hash?: string } } };
          try {
            msg = JSON.parse(text) as typeof msg;
          } catch {
            return;
          }
          if (msg.id === 1 && typeof msg.result === 'string') {
            subscription = msg.result;
            this.unpushed = null;
            this.polledFloor = this.polledHeight >= 0 ? this.polledHeight : null;
            // Heads may have come while there was no subscription (before the first too: a poll costs little).
            this.counts.subscriptions++;
            this.onHead?.(null);
            return;
          }
          if (msg.method !== 'eth_subscription' || msg.params?.subscription !== subscription || subscription === null) return;
          const head = msg.params.result;
          const height = typeof head?.number === 'string' ? Number.parseInt(head.number, 16) : NaN;
          if (!Number.isSafeInteger(height) || typeof head?.hash !== 'string') return;
          this.counts.heads++;
          // The subscription works: a later drop starts the backoff again from its shortest.
          this.failures = 0;
          this.pushedHeight = Math.max(this.pushedHeight, height);
          if (this.unpushed && this.pushedHeight >= this.unpushed.height) this.unpushed = null;
          this.onHead?.({ height, hash: head.hash });
        },
        onClose: (reason) => {
          if (this.client === client) this.client = null;
          if (!this.stopped) {
            this.log.warn('new-head push lost; polling goes on, reconnecting', { reason });
            this.retry();
          }
        },
      });
      if (this.stopped) return client.close();
      this.client = client;
      this.pingSentAt = 0;
      this.counts.connects++;
      client.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    } catch (err) {
      if (this.stopped) return;
      // The message names no URL: a ws_url may carry a key in its path.
      this.log.warn('new-head push unavailable; polling goes on, retrying', { error: err instanceof Error ? err.message : String(err) });
      this.retry();
    }
  }

  private retry(): void {
    if (this.stopped || this.timer) return;
    const base = Math.min(this.timing.maxMs, this.timing.minMs * 2 ** this.failures);
    this.failures++;
    const delay = base / 2 + Math.random() * (base / 2);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
    this.timer.unref();
  }
}
