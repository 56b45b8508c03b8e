import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { exportQuery, pageOf, pageQuery, timestamp, uuid } from '../shared/schema';
import { BalanceSchema } from './balance.service';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES, TransactionSchema } from './transaction.service';

const one = { auth: 'signed', permissions: ['read'] } as const;

export const transactionApi = {
  list: {
    ...one,
    method: 'get',
    path: '/v1/transactions',
    operationId: 'listTransactions',
    summary: 'A page of transactions (every money movement), or the whole filtered list as a file',
    tag: 'transactions',
    query: z.object({
      type: z.enum(TRANSACTION_TYPES).optional(),
      status: z.enum(TRANSACTION_STATUSES).optional(),
      coin_id: uuid().optional(),
      invoice_id: uuid().optional(),
      address_id: uuid().optional(),
      from: timestamp().optional(),
      to: timestamp().optional(),
      ...pageQuery,
      ...exportQuery,
    }),
    responses: { 200: pageOf(TransactionSchema).meta({ id: 'TransactionPage' }) },
    exports: true,
  },
  get: {
    ...one,
    method: 'get',
    path: '/v1/transactions/{id}',
    operationId: 'getTransaction',
    summary: 'A transaction',
    tag: 'transactions',
    responses: { 200: TransactionSchema },
  },
  balances: {
    ...one,
    method: 'get',
    path: '/v1/balances',
    operationId: 'listBalances',
    summary: 'The balance of every coin: available, hold and total',
    tag: 'balances',
    query: z.object({ ...pageQuery }),
    responses: { 200: pageOf(BalanceSchema).meta({ id: 'BalancePage' }) },
  },
} as const satisfies Record<string, ApiRoute>;
