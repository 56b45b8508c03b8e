import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { exportQuery, pageOf, pageQuery, uuid } from '../shared/schema';
import { CreateRefundBody } from './refund.request';
import { REFUND_STATUSES } from './refund.state';
import { RefundSchema } from './refund.view';

const one = { tag: 'refunds', auth: 'signed' } as const;

/** Refunds (PRODUCT §16): money sent back against an invoice or an incoming transaction, a withdrawal underneath. */
export const refundApi = {
  create: {
    ...one,
    method: 'post',
    path: '/v1/refunds',
    operationId: 'createRefund',
    summary: 'Refund an invoice or an incoming transaction; without to_address the payer gives it through refund_url',
    permissions: ['withdraw'],
    // The key's withdraw status decides, as for a withdrawal.
    permissionByHandler: true,
    body: CreateRefundBody,
    idempotent: true,
    responses: { 201: RefundSchema, 200: RefundSchema },
    // conflict: refund_exceeds_received, refund_id_mismatch, insufficient_funds.
    // not_found: the invoice or transaction is not the account's.
    errors: ['withdraw_pending_approval', 'kyb_required', 'forbidden', 'conflict', 'address_refused', 'not_found'],
  },
  list: {
    ...one,
    method: 'get',
    path: '/v1/refunds',
    operationId: 'listRefunds',
    summary: 'A page of refunds, or the whole filtered list as a file; `refund_id` looks one up',
    permissions: ['read'],
    query: z.object({
      status: z.enum(REFUND_STATUSES).optional(),
      invoice_id: uuid().optional(),
      refund_id: z.string().min(1).max(128).optional(),
      ...pageQuery,
      ...exportQuery,
    }),
    responses: { 200: pageOf(RefundSchema).meta({ id: 'RefundPage' }) },
    exports: true,
  },
  get: {
    ...one,
    method: 'get',
    path: '/v1/refunds/{id}',
    operationId: 'getRefund',
    summary: 'A refund',
    permissions: ['read'],
    responses: { 200: RefundSchema },
  },
  cancel: {
    ...one,
    method: 'post',
    path: '/v1/refunds/{id}/cancel',
    operationId: 'cancelRefund',
    summary: 'Cancel a refund waiting for its address or before its payout is processed; the hold is released',
    permissions: ['withdraw'],
    idempotent: true,
    responses: { 200: RefundSchema },
    errors: ['conflict'],
  },
} as const satisfies Record<string, ApiRoute>;
