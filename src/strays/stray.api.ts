import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { pageOf, pageQuery, uuid } from '../shared/schema';
import { STRAY_STATUSES } from './stray.state';
import { StraySchema } from './stray.view';
import { StrayRefundBody } from '../refunds/refund.request';
import { RefundSchema } from '../refunds/refund.view';

const one = { tag: 'strays', auth: 'signed' } as const;

/** Stray payments (PRODUCT §17): coins that arrived where they were not asked for, and the merchant's decision. */
export const strayApi = {
  list: {
    ...one,
    method: 'get',
    path: '/v1/strays',
    operationId: 'listStrays',
    summary: 'A page of stray payments: coins sent on another network or in another coin than asked',
    permissions: ['read'],
    query: z.object({
      status: z.enum(STRAY_STATUSES).optional(),
      network: z.string().min(1).max(64).optional().meta({ description: 'the network the coins arrived on' }),
      invoice_id: uuid().optional(),
      ...pageQuery,
    }),
    responses: { 200: pageOf(StraySchema).meta({ id: 'StrayPage' }) },
  },
  get: {
    ...one,
    method: 'get',
    path: '/v1/strays/{id}',
    operationId: 'getStray',
    summary: 'A stray payment',
    permissions: ['read'],
    responses: { 200: StraySchema },
  },
  credit: {
    ...one,
    method: 'post',
    path: '/v1/strays/{id}/credit',
    operationId: 'creditStray',
    summary: "Credit an open stray payment to the account's balance as a deposit (once; its transfer must be confirmed)",
    permissions: ['create_invoice'],
    idempotent: true,
    responses: { 200: StraySchema },
    errors: ['conflict'],
  },
  refund: {
    ...one,
    method: 'post',
    path: '/v1/strays/{id}/refund',
    operationId: 'refundStray',
    summary:
      'Refund an open stray payment whole (PRODUCT §16): a refund of the deposit it is credited as; without to_address the sender gives one through refund_url',
    permissions: ['withdraw'],
    permissionByHandler: true,
    body: StrayRefundBody,
    idempotent: true,
    responses: { 201: RefundSchema, 200: RefundSchema },
    // conflict: stray_not_open, stray_not_confirmed, refund_id_mismatch, insufficient_funds.
    errors: ['withdraw_pending_approval', 'kyb_required', 'forbidden', 'conflict', 'address_refused'],
  },
} as const satisfies Record<string, ApiRoute>;
