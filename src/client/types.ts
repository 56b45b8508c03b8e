/**
 * The client's types, taken (types only, nothing at run time) from the schemas the server validates
 * with and generates its OpenAPI document from.
 */
import type { z } from 'zod';
import type { CreateStaticAddressBody } from '../static-addresses/static-address.api';
import type { DepositView, StaticAddressView } from '../static-addresses/static-address.view';
import type { ApiKeySchema } from '../auth/account.api';
import type { CurrencySchema, FiatCurrencySchema, RateSchema } from '../catalog/catalog.api';
import type { CreateInvoiceBody } from '../invoices/invoice.api';
import type { InvoiceView } from '../invoices/invoice.view';
import type { EventType } from '../shared/events';
import type { StrayView } from '../strays/stray.view';
import type { RefundView } from '../refunds/refund.view';
import type { CreateRefundBody, StrayRefundBody } from '../refunds/refund.request';
import type { BalanceView } from '../transactions/balance.service';
import type { TransactionView } from '../transactions/transaction.service';
import type { AttemptView, DeliveryView } from '../webhooks/delivery.view';
import type { EndpointView } from '../webhooks/endpoint.view';
import type { CreateEndpointBody, UpdateEndpointBody } from '../webhooks/endpoint.request';
import type { CreateWithdrawalBody, EstimateBody } from '../withdrawals/withdrawal.request';
import type { EstimateSchema, WithdrawalSchema } from '../withdrawals/withdrawal.view';

export type Invoice = InvoiceView;
export type CreateInvoiceParams = z.input<typeof CreateInvoiceBody>;
export type StaticAddress = StaticAddressView;
export type StaticAddressWithDeposits = StaticAddressView & { deposits: DepositView[] };
export type CreateAddressParams = z.input<typeof CreateStaticAddressBody>;
export type Withdrawal = z.infer<typeof WithdrawalSchema>;
export type CreateWithdrawalParams = z.input<typeof CreateWithdrawalBody>;
export type EstimateParams = Pick<z.input<typeof EstimateBody>, 'coin_id' | 'amount' | 'to_address' | 'network_fee_mode'>;
export type WithdrawalEstimate = z.infer<typeof EstimateSchema>;
export type Stray = StrayView;

/** A refund (PRODUCT §16); its status: `awaiting_address` (waiting for the payer), then its withdrawal's, or `expired`. */
export type Refund = RefundView;
export type RefundStatus = Refund['status'];

/** The body of POST /v1/refunds: `invoice_id` or `transaction_id` (or both, when it is a payment of that invoice). */
export type CreateRefundParams = z.input<typeof CreateRefundBody>;
/** The body of POST /v1/strays/{id}/refund: the whole stray, so no amount. */
export type StrayRefundParams = z.input<typeof StrayRefundBody>;
export type Transaction = TransactionView;
export type Balance = BalanceView;
export type WebhookEndpoint = EndpointView;
export type WebhookEndpointWithSecret = EndpointView & { secret: string };
export type CreateEndpointParams = z.input<typeof CreateEndpointBody>;
export type UpdateEndpointParams = z.input<typeof UpdateEndpointBody>;
export type WebhookDelivery = DeliveryView;
export type WebhookDeliveryWithAttempts = DeliveryView & { attempt_log: AttemptView[] };
export type Currency = z.infer<typeof CurrencySchema>;
export type FiatCurrency = z.infer<typeof FiatCurrencySchema>;
export type Rate = z.infer<typeof RateSchema>;
export type ApiKey = z.infer<typeof ApiKeySchema>;

/** SPEC's keyset page. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface PageParams {
  limit?: number;
  cursor?: string;
}

export interface InvoiceFilters extends PageParams {
  status?: Invoice['status'];
  created_from?: string;
  created_to?: string;
  order_id?: string;
}
export interface AddressFilters extends PageParams {
  status?: StaticAddress['status'];
  search?: string;
  coin_id?: string;
  customer_id?: string;
}
export interface WithdrawalFilters extends PageParams {
  status?: Withdrawal['status'];
  coin_id?: string;
  payout_id?: string;
  created_from?: string;
  created_to?: string;
}
export interface RefundFilters extends PageParams {
  status?: RefundStatus;
  invoice_id?: string;
  refund_id?: string;
}
export interface StrayFilters extends PageParams {
  status?: Stray['status'];
  /** The network (chain id) the coins arrived on. */
  network?: string;
  invoice_id?: string;
}
export interface TransactionFilters extends PageParams {
  type?: Transaction['type'];
  status?: Transaction['status'];
  coin_id?: string;
  invoice_id?: string;
  address_id?: string;
  from?: string;
  to?: string;
}
export interface DeliveryFilters extends PageParams {
  status?: WebhookDelivery['status'];
  event_type?: EventType;
  endpoint_id?: string;
  from?: string;
  to?: string;
}

/** A webhook event as delivered: `{event_id, type, created_at, data}`. */
export type WebhookEvent =
  | { event_id: string; type: `invoice.${string}`; created_at: string; data: { invoice: Invoice; details?: { amount: string; chain_transaction_id: string } } }
  | { event_id: string; type: `deposit.${string}`; created_at: string; data: { address: StaticAddress; deposit: DepositView } & Record<string, unknown> }
  | { event_id: string; type: `withdrawal.${string}`; created_at: string; data: { withdrawal: Withdrawal } }
  | { event_id: string; type: `refund.${string}`; created_at: string; data: { refund: Refund } }
  | { event_id: string; type: `static_address.${string}`; created_at: string; data: { address: StaticAddress; reason?: string; archive_at?: string } }
  | { event_id: string; type: 'ping'; created_at: string; data: { endpoint_id: string; message: string } };
