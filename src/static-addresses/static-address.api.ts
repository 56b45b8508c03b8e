import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { exportQuery, pageOf, pageQuery, uuid } from '../shared/schema';
import { STATIC_ADDRESS_STATUSES } from './static-address.state';
import { StaticAddressSchema, StaticAddressWithDepositsSchema } from './static-address.view';

/** The body of POST /v1/addresses (PRODUCT §7): a customer and a coin (coin_id, or currency with network). */
export const CreateStaticAddressBody = z.strictObject({
  customer_id: z.string().min(1).max(128),
  coin_id: uuid().nullish(),
  currency: z.string().max(16).nullish(),
  network: z.string().min(1).max(64).nullish(),
  label: z.string().max(200).nullish(),
});

const one = { tag: 'addresses', auth: 'signed' } as const;

export const staticAddressApi = {
  create: {
    ...one,
    method: 'post',
    path: '/v1/addresses',
    operationId: 'createAddress',
    summary: 'Issue a static deposit address for a customer and a coin',
    permissions: ['create_address'],
    body: CreateStaticAddressBody,
    idempotent: true,
    responses: { 201: StaticAddressSchema },
    errors: ['conflict'],
  },
  list: {
    ...one,
    method: 'get',
    path: '/v1/addresses',
    operationId: 'listAddresses',
    summary: 'A page of static addresses, or the whole filtered list as a file',
    permissions: ['read'],
    query: z.object({
      status: z.enum(STATIC_ADDRESS_STATUSES).optional(),
      search: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .meta({ description: 'a case-sensitive substring of the address, the customer id or the label from 3 characters; 1 or 2 characters: a prefix' }),
      coin_id: uuid().optional(),
      customer_id: z.string().min(1).max(128).optional(),
      ...pageQuery,
      ...exportQuery,
    }),
    responses: { 200: pageOf(StaticAddressSchema).meta({ id: 'StaticAddressPage' }) },
    exports: true,
  },
  get: {
    ...one,
    method: 'get',
    path: '/v1/addresses/{id}',
    operationId: 'getAddress',
    summary: 'A static address with its latest deposits',
    permissions: ['read'],
    responses: { 200: StaticAddressWithDepositsSchema },
  },
  archive: {
    ...one,
    method: 'post',
    path: '/v1/addresses/{id}/archive',
    operationId: 'archiveAddress',
    summary: 'Archive a static address',
    permissions: ['create_address'],
    idempotent: true,
    responses: { 200: StaticAddressSchema },
    errors: ['conflict'],
  },
  restore: {
    ...one,
    method: 'post',
    path: '/v1/addresses/{id}/restore',
    operationId: 'restoreAddress',
    summary: 'Restore an archived address; 409 while another is active for the customer and coin',
    permissions: ['create_address'],
    idempotent: true,
    responses: { 200: StaticAddressSchema },
    errors: ['conflict'],
  },
} as const satisfies Record<string, ApiRoute>;
