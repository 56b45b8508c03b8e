import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenBuckets } from '../../src/auth/token-bucket';
import { checkoutRoutes } from '../../src/checkout/checkout.routes';
import type { CheckoutService } from '../../src/checkout/checkout.service';
import { createApp } from '../../src/http/app';
import type { RefundPageSource, RefundPageView } from '../../src/refunds/refund-page.source';
import { ApiError, conflict } from '../../src/shared/errors';
import { silentLogger } from '../../src/shared/logger';

/** A Tron-looking address: what the fake source takes; anything else is refused as a real one would be. */
export const GOOD_ADDRESS = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

/**
 * Refunds in memory, keyed by path id and token, that check an address as a Tron one and count
 * every call (a malformed link must never reach the source).
 */
export class FakeRefundPages implements RefundPageSource {
  readonly calls: string[] = [];
  private readonly refunds = new Map<string, RefundPageView & Record<string, unknown>>();

  add(id: string, token: string, view: Partial<RefundPageView> & Record<string, unknown> = {}): void {
    this.refunds.set(`${id} ${token}`, {
      status: 'awaiting_address',
      amount: '12.5',
      ticker: 'USDT',
      network: 'tron',
      network_name: 'Tron',
      network_fee_paid_by: 'payer',
      to_address: null,
      txid: null,
      expires_at: '2026-12-05T14:30:00.000Z',
      merchant_name: 'Test shop',
      ...view,
    });
  }

  /** Moves a refund on as the service would (the payer's page polls it). */
  set(id: string, token: string, change: Partial<RefundPageView>): void {
    const r = this.refunds.get(`${id} ${token}`)!;
    Object.assign(r, change);
  }

  async view(id: string, token: string) {
    this.calls.push(`view ${id} ${token}`);
    const r = this.refunds.get(`${id} ${token}`);
    return r ? { ...r } : null;
  }

  async check(id: string, token: string, address: string) {
    this.calls.push(`check ${id} ${token} ${address}`);
    const r = this.refunds.get(`${id} ${token}`);
    if (!r) throw new ApiError(404, 'not_found', 'refund not found');
    if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address)) {
      throw new ApiError(422, 'address_refused', 'the address is not a Tron address', { field: 'to_address' });
    }
    return { to_address: address, network: r.network, network_name: r.network_name };
  }

  async provide(id: string, token: string, address: string) {
    this.calls.push(`provide ${id} ${token} ${address}`);
    const r = this.refunds.get(`${id} ${token}`);
    if (!r) throw new ApiError(404, 'not_found', 'refund not found');
    if (r.status !== 'awaiting_address') throw conflict('the refund does not wait for an address', { reason: 'refund_not_awaiting_address' });
    await this.check(id, token, address);
    Object.assign(r, { status: 'pending', to_address: address });
    return { ...r };
  }
}

/**
 * The checkout routes alone on 127.0.0.1 (the payment page's own service is not there: its
 * routes are only asked for malformed ids, which never reach it). `nowMs` is the rate buckets' clock.
 */
export async function serveRefundPages(
  refundPages: RefundPageSource | undefined,
  nowMs: () => number = () => Date.now(),
): Promise<{ url: string; close: () => Promise<void> }> {
  const checkout = {} as CheckoutService;
  const buckets = new TokenBuckets(nowMs);
  const app = createApp({ logger: silentLogger, trustProxy: 0, routers: [checkoutRoutes({ checkout, buckets, ...(refundPages ? { refundPages } : {}) })] });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
