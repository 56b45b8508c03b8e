/**
 * The Coinkeep client for Node (20+): `import { Coinkeep } from 'coinkeep/client'`. It uses only
 * Node's fetch and crypto. It signs every call, sends an Idempotency-Key with every POST and keeps it
 * across retries, retries network errors, 409 idempotency.in_progress, 429 (after Retry-After) and
 * 5xx with exponential backoff and jitter, pages with async iterators, throws CoinkeepError with
 * `code` and `details`, and verifies webhooks.
 */
import { Transport, type ClientOptions } from './http';
import { Addresses, Balances, Currencies, Invoices, Rates, Refunds, Strays, Transactions, WebhookDeliveries, WebhookEndpoints, Withdrawals } from './resources';
import { verifyWebhook, type VerifyOptions, type WebhookHeaders } from './webhooks';
import type { WebhookEvent } from './types';

export class Coinkeep {
  readonly invoices: Invoices;
  readonly addresses: Addresses;
  readonly withdrawals: Withdrawals;
  readonly refunds: Refunds;
  readonly strays: Strays;
  readonly transactions: Transactions;
  readonly balances: Balances;
  readonly currencies: Currencies;
  readonly rates: Rates;
  readonly webhooks: {
    endpoints: WebhookEndpoints;
    deliveries: WebhookDeliveries;
    verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options?: VerifyOptions): WebhookEvent;
  };

  constructor(options: ClientOptions) {
    const t = new Transport(options);
    this.invoices = new Invoices(t);
    this.addresses = new Addresses(t);
    this.withdrawals = new Withdrawals(t);
    this.refunds = new Refunds(t);
    this.strays = new Strays(t);
    this.transactions = new Transactions(t);
    this.balances = new Balances(t);
    this.currencies = new Currencies(t);
    this.rates = new Rates(t);
    this.webhooks = { endpoints: new WebhookEndpoints(t), deliveries: new WebhookDeliveries(t), verify: verifyWebhook };
  }
}

export { verifyWebhook } from './webhooks';
export { CoinkeepConnectionError, CoinkeepError, WebhookVerificationError } from './errors';
export { canonicalString, requestSignature, webhookSignature } from './signing';
export { CLIENT_ROUTES } from './routes';
export type { ClientOptions } from './http';
export type { PagePromise, PostOptions } from './resources';
export type { VerifyOptions, WebhookHeaders } from './webhooks';
export type * from './types';
