import type { TestDaemon } from './daemon';
import type { MerchantSide } from './merchant-side';

/** Polls until the daemon's (first) chain has scanned to `tip` and is not in maintenance. */
export async function waitScannedTo(td: TestDaemon, tip: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = td.daemon.chains.status()[0]!;
    if ((status.scanned_height ?? -1) >= tip && !status.maintenance) return;
    if (Date.now() > deadline) throw new Error(`the chain was not scanned to ${tip} in time: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Polls until the daemon's (first) chain has its cursor: a loaded machine may miss the first
 * contact at start (the coins then wait in maintenance until a poll succeeds).
 */
export async function waitWatched(td: TestDaemon, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (td.daemon.chains.status()[0]!.scanned_height === null) {
    if (Date.now() > deadline) throw new Error(`the chain is not watched: ${JSON.stringify(td.daemon.chains.status()[0])}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What a chain's fixture offers alike on every chain kind, its coins named by ticker `T`. */
export interface ChainFixtureSide<T extends string> {
  createInvoice(ticker: T, amount: string, extra?: Record<string, unknown>): Promise<any>;
  /** Waits until the daemon has scanned the node's tip, then reads the invoice, which must pass `ok`. */
  waitInvoice(id: string, ok: (inv: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  /** Resolves once the daemon's cursor reached the node's current tip, out of maintenance. */
  scanned(timeoutMs?: number): Promise<void>;
  transactions(invoiceId: string): Promise<any[]>;
  available(ticker: T): Promise<string>;
}

/** The merchant's side of a chain's fixture: `tip` reads the node's current height. */
export function chainFixtureSide<T extends string>(
  td: TestDaemon,
  side: MerchantSide,
  coin: Record<T, string>,
  tip: () => number | Promise<number>,
): ChainFixtureSide<T> {
  const scanned = async (timeoutMs = 10_000): Promise<void> => waitScannedTo(td, await tip(), timeoutMs);
  return {
    createInvoice: (ticker, amount, extra = {}) => side.createInvoice({ amount, currency: ticker, coin_id: coin[ticker], ...extra }),
    async waitInvoice(id, ok, what, timeoutMs = 10_000) {
      await scanned(timeoutMs);
      const inv = await side.invoice(id);
      if (!ok(inv)) throw new Error(`not ${what} once the chain was scanned: ${JSON.stringify(inv)}`);
      return inv;
    },
    scanned,
    transactions: (invoiceId) => side.transactions(`invoice_id=${invoiceId}`),
    available: (ticker) => side.available(coin[ticker]),
  };
}
