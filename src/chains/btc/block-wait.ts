import type { Logger } from '../../shared/logger';
import { BitcoinRpc, BitcoinRpcError } from './rpc';

/** How long one `waitfornewblock` waits at the node (it answers the unchanged tip after this long); the HTTP request may take the RPC timeout beyond it. */
export const WAIT_MS = 30_000;
/** The JSON-RPC code of a method the node does not have (bcoin, a Core behind a proxy that allows a list of methods). */
const METHOD_NOT_FOUND = -32601;

export interface BlockWaitTiming {
  waitMs: number;
  /** Backoff after a failed call: from minMs, doubling to maxMs (with jitter). */
  minMs: number;
  maxMs: number;
}

/**
 * New Bitcoin blocks through Bitcoin Core's long poll `waitfornewblock`: one call waits at the node
 * until its tip changes (or waitMs passes) and answers the tip; a new one wakes the chain's
 * scanner at once. Like EVM's pushed heads, only a hint: the poll reads the tip and blocks as
 * always, and polling goes on beside it. A node without the method (bcoin answers method not
 * found) leaves polling alone, said once in the log; other failures are tried again after a pause
 * that doubles from minMs to maxMs. One call is open at a time (one of Core's RPC threads, of 4 by default).
 */
export class BlockWait {
  private stopped = true;
  private abort: AbortController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private lastHash: string | null = null;
  private readonly rpc: BitcoinRpc;
  /** Calls answered, new tips told, calls failed, and whether the node turned out not to offer the method: for tests and status. */
  readonly counts = { answers: 0, heads: 0, failures: 0, unsupported: false };

  constructor(
    rpcUrl: string,
    rpcTimeoutMs: number,
    private readonly log: Logger,
    private readonly timing: BlockWaitTiming = { waitMs: WAIT_MS, minMs: 1000, maxMs: 60_000 },
  ) {
    this.rpc = new BitcoinRpc(rpcUrl, timing.waitMs + rpcTimeoutMs);
  }

  start(onHead: (head: { height: number; hash: string } | null) => void): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loop(onHead);
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async loop(onHead: (head: { height: number; hash: string } | null) => void): Promise<void> {
    while (!this.stopped) {
      this.abort = new AbortController();
      try {
        const tip = await this.rpc.call<{ hash?: unknown; height?: unknown }>('waitfornewblock', [this.timing.waitMs], this.abort.signal);
        this.counts.answers++;
        this.failures = 0;
        if (typeof tip?.hash !== 'string' || typeof tip.height !== 'number') continue;
        if (tip.hash === this.lastHash) continue;
        this.lastHash = tip.hash;
        this.counts.heads++;
        onHead({ height: tip.height, hash: tip.hash });
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof BitcoinRpcError && err.rpcCode === METHOD_NOT_FOUND) {
          this.counts.unsupported = true;
          this.log.info('the node does not offer waitfornewblock; new blocks are found by polling only');
          return;
        }
        this.counts.failures++;
        this.log.warn('waiting for new blocks failed; polling goes on, trying again', { error: err instanceof Error ? err.message : String(err) });
        await this.pause();
      }
    }
  }

  private pause(): Promise<void> {
    const base = Math.min(this.timing.maxMs, this.timing.minMs * 2 ** this.failures);
    this.failures++;
    return new Promise((resolve) => {
      this.timer = setTimeout(
        () => {
          this.timer = null;
          resolve();
        },
        base / 2 + Math.random() * (base / 2),
      );
      this.timer.unref();
    });
  }
}
