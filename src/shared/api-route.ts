/**
 * The declaration of one route of the merchant API: method, path, who may call it, the schemas of
 * its query, body and responses, and the error codes it may answer. Each module declares its routes
 * beside their handlers (`*.api.ts`); the routers mount by these declarations and the OpenAPI
 * document is generated from them.
 */
import type { z } from 'zod';

/** SPEC "Errors": every code and its HTTP status. */
export const ERROR_STATUS = {
  validation_error: 400,
  unsupported_api_version: 400,
  'auth.missing_header': 401,
  'auth.invalid_key': 401,
  'auth.invalid_timestamp': 401,
  'auth.expired_timestamp': 401,
  'auth.invalid_signature': 401,
  'auth.test_key': 401,
  'auth.replay': 401,
  'auth.ip_not_allowed': 403,
  'auth.permission_denied': 403,
  withdraw_pending_approval: 403,
  kyb_required: 403,
  forbidden: 403,
  account_frozen: 403,
  not_found: 404,
  conflict: 409,
  'idempotency.in_progress': 409,
  payload_too_large: 413,
  'idempotency.mismatch': 422,
  address_refused: 422,
  no_allowed_coins: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Answers any route may give before its handler runs. */
export const COMMON_ERRORS: readonly ErrorCode[] = [
  'validation_error',
  'unsupported_api_version',
  'payload_too_large',
  'rate_limited',
  'internal_error',
  'unavailable',
  'timeout',
];
/** Answers of the signature check (SPEC "Authentication"). */
export const SIGNED_ERRORS: readonly ErrorCode[] = [
  'auth.missing_header',
  'auth.invalid_key',
  'auth.invalid_timestamp',
  'auth.expired_timestamp',
  'auth.invalid_signature',
  'auth.test_key',
  'auth.replay',
  'auth.ip_not_allowed',
  'auth.permission_denied',
  'account_frozen',
];
/** Answers of the Idempotency-Key middleware (SPEC "Idempotency (POST)"). */
export const IDEMPOTENCY_ERRORS: readonly ErrorCode[] = ['idempotency.in_progress', 'idempotency.mismatch'];

export type Permission = 'read' | 'create_invoice' | 'create_address' | 'withdraw';

export interface ApiRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The OpenAPI path template, `{id}` for a path parameter. */
  path: `/v1/${string}`;
  operationId: string;
  summary: string;
  tag: string;
  /** `signed`: the signature headers are required; `optional`: signed or not; `none`: unsigned. */
  auth: 'signed' | 'optional' | 'none';
  /** The permissions of which the key needs one: `mount` checks them (documented in the OpenAPI document from here). */
  permissions?: readonly Permission[];
  /** The handler decides the permission itself (a payout: a key whose withdraw permission waits for approval answers otherwise). */
  permissionByHandler?: true;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Whether an empty body is accepted (an optional body). */
  bodyOptional?: boolean;
  /** The route takes an Idempotency-Key. */
  idempotent?: boolean;
  /** The service binds the Idempotency-Key itself, in the transaction that creates (withdrawals: per merchant, for good), not the per-key middleware. */
  idempotencyByService?: true;
  /** Success responses: status → body schema. */
  responses: Readonly<Record<number, z.ZodType>>;
  /** `?format=csv|xlsx` streams the list as a file. */
  exports?: boolean;
  /** Error codes of this route beyond the common and signature ones. */
  errors?: readonly ErrorCode[];
}

/** A route's Koa path (`/v1/invoices/:id`). */
export const koaPath = (route: ApiRoute): string => route.path.replace(/\{(\w+)\}/g, ':$1');

/** Every error code a route may answer. */
export function errorsOf(route: ApiRoute): ErrorCode[] {
  const all = new Set<ErrorCode>([
    ...COMMON_ERRORS,
    ...(route.auth === 'none' ? [] : SIGNED_ERRORS),
    ...(route.idempotent ? IDEMPOTENCY_ERRORS : []),
    ...(route.errors ?? []),
  ]);
  if (route.path.includes('{')) all.add('not_found');
  return [...all];
}
