import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { exportQuery, pageOf, pageQuery, timestamp, uuid } from '../shared/schema';
import { INVOICE_STATUSES } from './invoice.query';
import { InvoiceSchema } from './invoice.view';

/** The body of POST /v1/invoices (SPEC "POST /v1/invoices"): fields, types and sizes; the catalogue and the rules are checked after. */
export const CreateInvoiceBody = z.strictObject({
  currency: z.string().min(1).max(16),
  coin_id: uuid().nullish(),
  amount: z.string().min(1).max(100).meta({ description: "decimal string within the currency's decimals" }),
  order_id: z.string().min(1).max(128).nullish(),
  idempotency_by_order_id: z.boolean().nullish(),
  description: z.string().min(1).max(1000).nullish(),
  return_url: z.string().min(1).max(2048).nullish(),
  webhook_url: z.string().min(1).max(2048).nullish(),
  metadata: z.record(z.string(), z.string()).nullish().meta({ description: 'up to 20 string pairs, at most 4 KB' }),
  fee_paid_by: z.enum(['merchant', 'payer']).nullish(),
  allowed_coin_ids: z.array(uuid()).min(1).max(100).nullish(),
});

export const invoiceApi = {
  create: {
    method: 'post',
    path: '/v1/invoices',
    operationId: 'createInvoice',
    summary: 'Create an invoice',
    tag: 'invoices',
    auth: 'signed',
    permissions: ['create_invoice'],
    body: CreateInvoiceBody,
    idempotent: true,
    responses: { 201: InvoiceSchema, 200: InvoiceSchema },
    errors: ['conflict', 'no_allowed_coins'],
  },
  list: {
    method: 'get',
    path: '/v1/invoices',
    operationId: 'listInvoices',
    summary: 'A page of invoices, newest first, or the whole filtered list as a file',
    tag: 'invoices',
    auth: 'signed',
    permissions: ['read'],
    query: z.object({
      status: z.enum(INVOICE_STATUSES).optional(),
      created_from: timestamp().optional(),
      created_to: timestamp().optional(),
      order_id: z.string().min(1).max(128).optional(),
      ...pageQuery,
      ...exportQuery,
    }),
    responses: { 200: pageOf(InvoiceSchema).meta({ id: 'InvoicePage' }) },
    exports: true,
  },
  get: {
    method: 'get',
    path: '/v1/invoices/{id}',
    operationId: 'getInvoice',
    summary: 'An invoice',
    tag: 'invoices',
    auth: 'signed',
    permissions: ['read'],
    responses: { 200: InvoiceSchema },
  },
  cancel: {
    method: 'post',
    path: '/v1/invoices/{id}/cancel',
    operationId: 'cancelInvoice',
    summary: 'Cancel an invoice (only from new)',
    tag: 'invoices',
    auth: 'signed',
    permissions: ['create_invoice'],
    idempotent: true,
    responses: { 200: InvoiceSchema },
    errors: ['conflict'],
  },
  accept: {
    method: 'post',
    path: '/v1/invoices/{id}/accept',
    operationId: 'acceptInvoice',
    summary: 'Accept an underpaid invoice as paid (resolution accepted_underpayment); nothing is credited again',
    tag: 'invoices',
    auth: 'signed',
    permissions: ['create_invoice'],
    idempotent: true,
    responses: { 200: InvoiceSchema },
    // conflict: details.reason invoice_not_underpaid.
    errors: ['conflict'],
  },
} as const satisfies Record<string, ApiRoute>;
