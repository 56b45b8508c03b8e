import type { Writable } from 'node:stream';
import type { InvoiceChanges } from '../invoices/invoice-changes';
import type { PayerView } from './checkout.service';

/** Open streams at most, overall and per client address: each holds a connection. */
export const STREAMS_MAX = 10_000;
export const STREAMS_PER_ADDRESS = 16;
/** A comment line this often keeps proxies from closing an idle stream (one timer for all streams). */
export const HEARTBEAT_MS = 25_000;
/** A stream is closed after this long; the page's EventSource opens another (a bound on what one page holds). */
export const STREAM_MAX_MS = 30 * 60_000;
/** What the page's EventSource waits before reconnecting (the `retry:` field). */
const RETRY_MS = 3000;

/** Statuses after which nothing changes on the page: the stream ends (the page's FINAL). */
const FINAL = new Set<PayerView['status']>(['paid', 'expired', 'cancelled']);

interface Stream {
  out: Writable;
  ip: string;
  openedAt: number;
}

interface Watched {
  streams: Set<Stream>;
  last: string;
  unwatch: () => void;
  reading: boolean;
  again: boolean;
}

/**
 * The payment page's status as Server-Sent Events (GET /pay/{id}/events): one stream per open
 * page. A stream gets the view at once, then a new one after each committed change of its invoice
 * (InvoiceChanges, told by the changing transaction's commit): one database read per change and
 * invoice, whatever the number of its open pages, and none while nothing changes. A final status
 * ends the stream. The page keeps polling as the fallback (proxies that buffer).
 */
export class StatusStreams {
  private readonly byInvoice = new Map<string, Watched>();
  private readonly perAddress = new Map<string, number>();
  private count = 0;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      changes: InvoiceChanges;
      /** The view read from the database (not a cached one): after a commit, the truth. */
      read: (id: string) => Promise<PayerView | null>;
      now: () => number;
    },
  ) {}

  get open(): number {
    return this.count;
  }

  /** Whether one more stream may open from `ip`. */
  admits(ip: string): boolean {
    return this.count < STREAMS_MAX && (this.perAddress.get(ip) ?? 0) < STREAMS_PER_ADDRESS;
  }

  /** Serves `out` the view now and after each change; ends it at a final status, after STREAM_MAX_MS, or when the client leaves (`out` closes). */
  start(id: string, ip: string, out: Writable, view: PayerView): void {
    const json = JSON.stringify(view);
    out.write(`retry: ${RETRY_MS}\n\n`);
    out.write(`data: ${json}\n\n`);
    if (FINAL.has(view.status)) {
      out.end();
      return;
    }
    const stream: Stream = { out, ip, openedAt: this.deps.now() };
    let w = this.byInvoice.get(id);
    if (!w) {
      const watched: Watched = { streams: new Set(), last: json, unwatch: () => undefined, reading: false, again: false };
      watched.unwatch = this.deps.changes.watch(id, () => this.changed(id, watched));
      this.byInvoice.set(id, (w = watched));
    }
    w.streams.add(stream);
    this.count++;
    this.perAddress.set(ip, (this.perAddress.get(ip) ?? 0) + 1);
    out.once('close', () => this.drop(id, stream));
    this.heartbeat ??= setInterval(() => this.beat(), HEARTBEAT_MS).unref();
  }

  /** Ends every stream (the daemon stops). */
  close(): void {
    for (const w of this.byInvoice.values()) for (const s of w.streams) s.out.end();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** One read for all the invoice's streams; changes that come during it read once more after it. */
  private changed(id: string, w: Watched): void {
    if (w.reading) {
      w.again = true;
      return;
    }
    w.reading = true;
    void this.deps
      .read(id)
      .then(
        (view) => {
          if (!view) return;
          const json = JSON.stringify(view);
          if (json !== w.last) {
            w.last = json;
            for (const s of w.streams) s.out.write(`data: ${json}\n\n`);
          }
          if (FINAL.has(view.status)) for (const s of [...w.streams]) s.out.end();
        },
        () => undefined,
      )
      .finally(() => {
        w.reading = false;
        if (w.again && this.byInvoice.get(id) === w) {
          w.again = false;
          this.changed(id, w);
        }
      });
  }

  private drop(id: string, stream: Stream): void {
    const w = this.byInvoice.get(id);
    if (!w || !w.streams.delete(stream)) return;
    this.count--;
    const n = (this.perAddress.get(stream.ip) ?? 1) - 1;
    if (n <= 0) this.perAddress.delete(stream.ip);
    else this.perAddress.set(stream.ip, n);
    if (w.streams.size === 0) {
      w.unwatch();
      this.byInvoice.delete(id);
    }
    if (this.count === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
  }

  private beat(): void {
    const now = this.deps.now();
    for (const w of this.byInvoice.values())
      for (const s of [...w.streams]) {
        if (now - s.openedAt >= STREAM_MAX_MS) s.out.end();
        else s.out.write(': \n\n');
      }
  }
}
