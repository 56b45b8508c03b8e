import { StraySchema } from '../strays/stray.view';
import { RefundSchema } from '../refunds/refund.view';
import { z } from 'zod';
import { DepositSchema, StaticAddressSchema } from '../static-addresses/static-address.view';
import { InvoiceSchema } from '../invoices/invoice.view';
import type { ApiRoute } from '../shared/api-route';
import { EVENT_TYPES, type EventType } from '../shared/events';
import { pageOf, pageQuery, timestamp, uuid } from '../shared/schema';
import { WithdrawalSchema } from '../withdrawals/withdrawal.view';
import { DELIVERY_STATUSES, DeliverySchema, DeliveryWithAttemptsSchema } from './delivery.view';
import { EndpointSchema, EndpointWithSecretSchema } from './endpoint.view';
import { CreateEndpointBody, RotateSecretBody, UpdateEndpointBody } from './endpoint.request';

const one = { tag: 'webhooks', auth: 'signed' } as const;
const read = { ...one, permissions: ['read'] } as const;
const change = { ...one, permissions: ['create_invoice'] } as const;

export const webhookApi = {
  listEndpoints: {
    ...read,
    method: 'get',
    path: '/v1/webhooks/endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'A page of webhook endpoints',
    query: z.object({ ...pageQuery }),
    responses: { 200: pageOf(EndpointSchema).meta({ id: 'WebhookEndpointPage' }) },
  },
  createEndpoint: {
    ...change,
    method: 'post',
    path: '/v1/webhooks/endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Create an endpoint; its secret is answered once',
    body: CreateEndpointBody,
    idempotent: true,
    responses: { 201: EndpointWithSecretSchema },
    errors: ['conflict'],
  },
  getEndpoint: {
    ...read,
    method: 'get',
    path: '/v1/webhooks/endpoints/{id}',
    operationId: 'getWebhookEndpoint',
    summary: 'A webhook endpoint',
    responses: { 200: EndpointSchema },
  },
  updateEndpoint: {
    ...change,
    method: 'patch',
    path: '/v1/webhooks/endpoints/{id}',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change the URL, event types, description or enabled flag',
    body: UpdateEndpointBody,
    responses: { 200: EndpointSchema },
  },
  deleteEndpoint: {
    ...change,
    method: 'delete',
    path: '/v1/webhooks/endpoints/{id}',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete an endpoint; its pending deliveries fail',
    responses: { 200: z.object({ id: uuid(), deleted: z.literal(true) }) },
  },
  rotateSecret: {
    ...change,
    method: 'post',
    path: '/v1/webhooks/endpoints/{id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'A new endpoint secret (given, or generated), answered once',
    body: RotateSecretBody,
    bodyOptional: true,
    idempotent: true,
    responses: { 200: EndpointWithSecretSchema },
  },
  listDeliveries: {
    ...read,
    method: 'get',
    path: '/v1/webhooks/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'A page of deliveries, newest first',
    query: z.object({
      status: z.enum(DELIVERY_STATUSES).optional(),
      event_type: z.enum(EVENT_TYPES).optional(),
      endpoint_id: uuid().optional(),
      from: timestamp().optional(),
      to: timestamp().optional(),
      ...pageQuery,
    }),
    responses: { 200: pageOf(DeliverySchema).meta({ id: 'WebhookDeliveryPage' }) },
  },
  getDelivery: {
    ...read,
    method: 'get',
    path: '/v1/webhooks/deliveries/{id}',
    operationId: 'getWebhookDelivery',
    summary: 'A delivery with its attempts',
    responses: { 200: DeliveryWithAttemptsSchema },
  },
  retryDelivery: {
    ...change,
    method: 'post',
    path: '/v1/webhooks/deliveries/{id}/retry',
    operationId: 'retryWebhookDelivery',
    summary: 'Resend a delivery now; 409 while it is still pending',
    idempotent: true,
    responses: { 200: DeliverySchema },
    errors: ['conflict'],
  },
} as const satisfies Record<string, ApiRoute>;

/** The data of each event type (SPEC "Events"): what an endpoint receives under `data`. */
const invoiceData = z.object({
  invoice: InvoiceSchema,
  details: z.object({ amount: z.string(), chain_transaction_id: z.string() }).optional(),
});
const depositData = z.looseObject({ address: StaticAddressSchema, deposit: DepositSchema });
const withdrawalData = z.object({ withdrawal: WithdrawalSchema });
const addressData = z.looseObject({ address: StaticAddressSchema, reason: z.string().optional(), archive_at: timestamp().optional() });
const strayData = z.object({ stray: StraySchema });
const refundData = z.object({ refund: RefundSchema });
const pingData = z.object({ endpoint_id: uuid(), message: z.string() });

const dataOf = (type: EventType): z.ZodType =>
  type === 'ping'
    ? pingData
    : type.startsWith('invoice.')
      ? invoiceData
      : type.startsWith('deposit.')
        ? depositData
        : type.startsWith('withdrawal.')
          ? withdrawalData
          : type.startsWith('stray.')
            ? strayData
            : type.startsWith('refund.')
              ? refundData
              : addressData;

/** The webhook body of each event type: `{event_id, type, created_at, data}`. */
export const EVENT_SCHEMAS: ReadonlyArray<{ type: EventType; schema: z.ZodType }> = EVENT_TYPES.map((type) => ({
  type,
  schema: z.object({ event_id: uuid(), type: z.literal(type), created_at: timestamp(), data: dataOf(type) }),
}));
