import type { CallOptions, Transport } from './http';
import type { RouteName } from './routes';
import type * as T from './types';

type Query = Record<string, string | number | undefined>;
export interface PostOptions {
  /** Reuse a key of your own (e.g. your order id) to make the call safe to repeat later. */
  idempotencyKey?: string;
}

/**
 * One page as a promise, and every item of every page as an async iterator:
 * `await invoices.list({limit: 50})` or `for await (const invoice of invoices.list())`.
 */
export type PagePromise<I> = Promise<T.Page<I>> & AsyncIterable<I>;

function paged<I>(t: Transport, name: RouteName, query: Query = {}): PagePromise<I> {
  let first: Promise<T.Page<I>> | undefined;
  const page = () => (first ??= t.call<T.Page<I>>(name, { query }));
  return Object.assign(
    {
      then: <A, B>(ok?: ((p: T.Page<I>) => A | PromiseLike<A>) | null, fail?: ((e: unknown) => B | PromiseLike<B>) | null) => page().then(ok, fail),
      catch: <B>(fail?: ((e: unknown) => B | PromiseLike<B>) | null) => page().catch(fail),
      finally: (f?: (() => void) | null) => page().finally(f),
      [Symbol.toStringTag]: 'PagePromise',
    },
    {
      async *[Symbol.asyncIterator](): AsyncIterator<I> {
        let current = await page();
        for (;;) {
          yield* current.items;
          if (current.next_cursor === null) return;
          current = await t.call<T.Page<I>>(name, { query: { ...query, cursor: current.next_cursor } });
        }
      },
    },
  ) as PagePromise<I>;
}

const post = (opts: PostOptions | undefined, rest: CallOptions): CallOptions => ({ ...rest, idempotencyKey: opts?.idempotencyKey });
const q = (params: object | undefined): Query => ({ ...(params as Query) });

export class Invoices {
  constructor(private readonly t: Transport) {}
  create(params: T.CreateInvoiceParams, opts?: PostOptions): Promise<T.Invoice> {
    return this.t.call('invoices.create', post(opts, { body: params }));
  }
  get(id: string): Promise<T.Invoice> {
    return this.t.call('invoices.get', { path: { id } });
  }
  list(filters?: T.InvoiceFilters): PagePromise<T.Invoice> {
    return paged(this.t, 'invoices.list', q(filters));
  }
  cancel(id: string, opts?: PostOptions): Promise<T.Invoice> {
    return this.t.call('invoices.cancel', post(opts, { path: { id } }));
  }
  /**
   * Accepts an `underpaid` invoice as paid (PRODUCT §16): status `paid`, `resolution:
   * "accepted_underpayment"`. Any other status is 409 `conflict`, `details.reason: invoice_not_underpaid`.
   */
  accept(id: string, opts?: PostOptions): Promise<T.Invoice> {
    return this.t.call('invoices.accept', post(opts, { path: { id } }));
  }
}

export class Addresses {
  constructor(private readonly t: Transport) {}
  create(params: T.CreateAddressParams, opts?: PostOptions): Promise<T.StaticAddress> {
    return this.t.call('addresses.create', post(opts, { body: params }));
  }
  get(id: string): Promise<T.StaticAddressWithDeposits> {
    return this.t.call('addresses.get', { path: { id } });
  }
  list(filters?: T.AddressFilters): PagePromise<T.StaticAddress> {
    return paged(this.t, 'addresses.list', q(filters));
  }
  archive(id: string, opts?: PostOptions): Promise<T.StaticAddress> {
    return this.t.call('addresses.archive', post(opts, { path: { id } }));
  }
  restore(id: string, opts?: PostOptions): Promise<T.StaticAddress> {
    return this.t.call('addresses.restore', post(opts, { path: { id } }));
  }
}

export class Withdrawals {
  constructor(private readonly t: Transport) {}
  estimate(params: T.EstimateParams): Promise<T.WithdrawalEstimate> {
    return this.t.call('withdrawals.estimate', { body: params });
  }
  /** The same idempotencyKey (or payout_id) always returns the same withdrawal, also long after. */
  create(params: T.CreateWithdrawalParams, opts?: PostOptions): Promise<T.Withdrawal> {
    return this.t.call('withdrawals.create', post(opts, { body: params }));
  }
  get(id: string): Promise<T.Withdrawal> {
    return this.t.call('withdrawals.get', { path: { id } });
  }
  list(filters?: T.WithdrawalFilters): PagePromise<T.Withdrawal> {
    return paged(this.t, 'withdrawals.list', q(filters));
  }
  /** The withdrawal with this payout_id, or null. */
  async findByPayoutId(payoutId: string): Promise<T.Withdrawal | null> {
    return (await this.list({ payout_id: payoutId, limit: 1 })).items[0] ?? null;
  }
  cancel(id: string, opts?: PostOptions): Promise<T.Withdrawal> {
    return this.t.call('withdrawals.cancel', post(opts, { path: { id } }));
  }
}

/** Refunds of what an invoice or a deposit received (PRODUCT §16): a withdrawal underneath. */
export class Refunds {
  constructor(private readonly t: Transport) {}
  /**
   * Without `to_address` the refund waits in `awaiting_address` with a `refund_url` for the payer.
   * The same idempotencyKey (or refund_id) always returns the same refund. More than was received
   * less earlier refunds is 409 `conflict`, `details.reason: refund_exceeds_received`.
   */
  create(params: T.CreateRefundParams, opts?: PostOptions): Promise<T.Refund> {
    return this.t.call('refunds.create', post(opts, { body: params }));
  }
  get(id: string): Promise<T.Refund> {
    return this.t.call('refunds.get', { path: { id } });
  }
  list(filters?: T.RefundFilters): PagePromise<T.Refund> {
    return paged(this.t, 'refunds.list', q(filters));
  }
  /** The refund with this refund_id, or null. */
  async findByRefundId(refundId: string): Promise<T.Refund | null> {
    return (await this.list({ refund_id: refundId, limit: 1 })).items[0] ?? null;
  }
  /** 409 `conflict` once it can no longer be cancelled (processing, sent, final). */
  cancel(id: string, opts?: PostOptions): Promise<T.Refund> {
    return this.t.call('refunds.cancel', post(opts, { path: { id } }));
  }
}

/** Stray payments: coins sent on another network or in another coin than asked (PRODUCT §17). */
export class Strays {
  constructor(private readonly t: Transport) {}
  get(id: string): Promise<T.Stray> {
    return this.t.call('strays.get', { path: { id } });
  }
  list(filters?: T.StrayFilters): PagePromise<T.Stray> {
    return paged(this.t, 'strays.list', q(filters));
  }
  /** Credits an open, confirmed stray to the balance as a deposit, once (409 `conflict` after). */
  credit(id: string, opts?: PostOptions): Promise<T.Stray> {
    return this.t.call('strays.credit', post(opts, { path: { id } }));
  }
  /** Refunds an open, confirmed stray whole (PRODUCT §16): without `to_address` the sender gives one through `refund_url`. */
  refund(id: string, params: T.StrayRefundParams = {}, opts?: PostOptions): Promise<T.Refund> {
    return this.t.call('strays.refund', post(opts, { path: { id }, body: params }));
  }
}

export class Transactions {
  constructor(private readonly t: Transport) {}
  get(id: string): Promise<T.Transaction> {
    return this.t.call('transactions.get', { path: { id } });
  }
  list(filters?: T.TransactionFilters): PagePromise<T.Transaction> {
    return paged(this.t, 'transactions.list', q(filters));
  }
}

export class Balances {
  constructor(private readonly t: Transport) {}
  list(params?: T.PageParams): PagePromise<T.Balance> {
    return paged(this.t, 'balances.list', q(params));
  }
}

export class Currencies {
  constructor(private readonly t: Transport) {}
  list(): Promise<{ items: T.Currency[] }> {
    return this.t.call('currencies.list');
  }
  fiat(): Promise<{ default: string; items: T.FiatCurrency[] }> {
    return this.t.call('currencies.fiat');
  }
}

export class Rates {
  constructor(private readonly t: Transport) {}
  get(fiat: string): Promise<{ fiat: string; items: T.Rate[] }> {
    return this.t.call('rates.get', { query: { fiat } });
  }
}

export class WebhookEndpoints {
  constructor(private readonly t: Transport) {}
  list(params?: T.PageParams): PagePromise<T.WebhookEndpoint> {
    return paged(this.t, 'webhooks.endpoints.list', q(params));
  }
  create(params: T.CreateEndpointParams, opts?: PostOptions): Promise<T.WebhookEndpointWithSecret> {
    return this.t.call('webhooks.endpoints.create', post(opts, { body: params }));
  }
  get(id: string): Promise<T.WebhookEndpoint> {
    return this.t.call('webhooks.endpoints.get', { path: { id } });
  }
  update(id: string, params: T.UpdateEndpointParams): Promise<T.WebhookEndpoint> {
    return this.t.call('webhooks.endpoints.update', { path: { id }, body: params });
  }
  delete(id: string): Promise<{ id: string; deleted: true }> {
    return this.t.call('webhooks.endpoints.delete', { path: { id } });
  }
  rotateSecret(id: string, params: { secret?: string } = {}, opts?: PostOptions): Promise<T.WebhookEndpointWithSecret> {
    return this.t.call('webhooks.endpoints.rotateSecret', post(opts, { path: { id }, body: params }));
  }
}

export class WebhookDeliveries {
  constructor(private readonly t: Transport) {}
  list(filters?: T.DeliveryFilters): PagePromise<T.WebhookDelivery> {
    return paged(this.t, 'webhooks.deliveries.list', q(filters));
  }
  get(id: string): Promise<T.WebhookDeliveryWithAttempts> {
    return this.t.call('webhooks.deliveries.get', { path: { id } });
  }
  retry(id: string, opts?: PostOptions): Promise<T.WebhookDelivery> {
    return this.t.call('webhooks.deliveries.retry', post(opts, { path: { id } }));
  }
}
