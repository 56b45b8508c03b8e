import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { exportQuery, pageOf, pageQuery, timestamp, uuid } from '../shared/schema';
import { CreateWithdrawalBody, EstimateBody } from './withdrawal.request';
import { EstimateSchema, WithdrawalSchema } from './withdrawal.view';
import { WITHDRAWAL_STATUSES } from './withdrawal.state';

const one = { tag: 'withdrawals', auth: 'signed' } as const;
const PAYOUT_REFUSALS = [
  'withdraw_pending_approval',
  'kyb_required',
  'forbidden',
  'conflict',
  'address_refused',
  'idempotency.mismatch',
  'idempotency.in_progress',
] as const;

export const withdrawalApi = {
  estimate: {
    ...one,
    method: 'post',
    path: '/v1/withdrawals/estimate',
    operationId: 'estimateWithdrawal',
    summary: 'The platform fee, the reserved network fee and the total debit of a withdrawal',
    permissions: ['read', 'withdraw'],
    body: EstimateBody,
    idempotent: true,
    responses: { 200: EstimateSchema },
    // conflict: `amount: "max"` when not even the least withdrawal fits (insufficient_funds).
    errors: ['address_refused', 'conflict'],
  },
  create: {
    ...one,
    method: 'post',
    path: '/v1/withdrawals',
    operationId: 'createWithdrawal',
    summary: 'Create a withdrawal; the same Idempotency-Key or payout_id returns the same withdrawal',
    permissions: ['withdraw'],
    // The key's withdraw status decides (a request waiting for approval answers otherwise), and the key is bound per merchant for good.
    permissionByHandler: true,
    body: CreateWithdrawalBody,
    idempotent: true,
    idempotencyByService: true,
    responses: { 201: WithdrawalSchema, 200: WithdrawalSchema },
    errors: PAYOUT_REFUSALS,
  },
  list: {
    ...one,
    method: 'get',
    path: '/v1/withdrawals',
    operationId: 'listWithdrawals',
    summary: 'A page of withdrawals, or the whole filtered list as a file; `payout_id` looks one up',
    permissions: ['read'],
    query: z.object({
      status: z.enum(WITHDRAWAL_STATUSES).optional(),
      coin_id: uuid().optional(),
      payout_id: z.string().min(1).max(128).optional(),
      created_from: timestamp().optional(),
      created_to: timestamp().optional(),
      ...pageQuery,
      ...exportQuery,
    }),
    responses: { 200: pageOf(WithdrawalSchema).meta({ id: 'WithdrawalPage' }) },
    exports: true,
  },
  get: {
    ...one,
    method: 'get',
    path: '/v1/withdrawals/{id}',
    operationId: 'getWithdrawal',
    summary: 'A withdrawal',
    permissions: ['read'],
    responses: { 200: WithdrawalSchema },
  },
  cancel: {
    ...one,
    method: 'post',
    path: '/v1/withdrawals/{id}/cancel',
    operationId: 'cancelWithdrawal',
    summary: 'Cancel a withdrawal before processing; the hold is released',
    permissions: ['withdraw'],
    idempotent: true,
    responses: { 200: WithdrawalSchema },
    errors: ['conflict'],
  },
} as const satisfies Record<string, ApiRoute>;
