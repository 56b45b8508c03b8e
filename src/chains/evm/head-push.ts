import type { Logger } from '../../shared/logger';
import { WsClient } from '../../shared/ws-client';

/** The first pause before connecting again; it doubles after each failure up to MAX_BACKOFF_MS. */
export const MIN_BACKOFF_MS = 250;
export const MAX_BACKOFF_MS = 30_000;

/** What a pushed head tells: only a hint that the node may have a new block (the poll reads the truth). */
export interface PushedHead {
  height: number;
  hash: string;
}

/**
 * An EVM node's new heads pushed over WebSocket (`ws_url`: `eth_subscribe` to `newHeads`): each
 * one calls `onHead`, which wakes the chain's scanner at once. Polling stays the fallback and the
 * truth: a head pushed here is never recorded, the scanner reads the tip and the blocks over
 * JSON-RPC as it always does, so a head the node then does not serve (a lying or racing push)
 * changes nothing. A dropped or refused connection is tried again after a pause that doubles from
 * MIN_BACKOFF_MS to MAX_BACKOFF_MS (with jitter), back to the shortest once a subscription holds.
 */
export class HeadPush {
  private client: WsClient | null = null;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private onHead: ((head: PushedHead) => void) | null = null;
  /** Connections made (a reconnect counts), and heads received: for tests and status. */
  readonly counts = { connects: 0, heads: 0 };

  constructor(
    private readonly url: string,
    private readonly log: Logger,
    private readonly backoff = { minMs: MIN_BACKOFF_MS, maxMs: MAX_BACKOFF_MS },
  ) {}

  /** Starts listening; `onHead` is called for each head pushed. */
  start(onHead: (head: PushedHead) => void): void {
    this.onHead = onHead;
    this.stopped = false;
    void this.connect();
  }

  get connected(): boolean {
    return this.client?.isOpen === true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.client?.close();
    this.client = null;
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
            this.failures = 0;
            return;
          }
          if (msg.method !== 'eth_subscription' || msg.params?.subscription !== subscription || subscription === null) return;
          const head = msg.params.result;
          const height = typeof head?.number === 'string' ? Number.parseInt(head.number, 16) : NaN;
          if (!Number.isSafeInteger(height) || typeof head?.hash !== 'string') return;
          this.counts.heads++;
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
    const base = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** this.failures);
    this.failures++;
    const delay = base / 2 + Math.random() * (base / 2);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
    this.timer.unref();
  }
}
