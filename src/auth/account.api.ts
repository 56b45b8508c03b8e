import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { pageOf, pageQuery, timestamp, type Same } from '../shared/schema';
import type { presentKey } from './key.service';

export const KEY_STATUSES = ['active', 'disabled', 'revoked'] as const;

/** An API key as GET /v1/account/api-keys shows it (SPEC "API key"): never the secret, its last 4 characters. */
export const ApiKeySchema = z
  .object({
    key_id: z.string(),
    name: z.string(),
    permissions: z.array(z.string()),
    withdraw_status: z.enum(['none', 'pending', 'granted']),
    network: z.string(),
    ip_whitelist: z.array(z.string()),
    rate_limit_per_minute: z.number().int(),
    status: z.enum(KEY_STATUSES),
    secret_last4: z.string(),
    secret_holder: z.string(),
    secret_generation: z.number().int(),
    rotation_required: z.boolean(),
    previous_secret_valid_until: timestamp().nullable(),
    created_at: timestamp(),
  })
  .meta({ id: 'ApiKey' });
const sameKey: Same<z.infer<typeof ApiKeySchema>, ReturnType<typeof presentKey>> = true;
void sameKey;

export const accountApi = {
  apiKeys: {
    method: 'get',
    path: '/v1/account/api-keys',
    operationId: 'listApiKeys',
    summary: 'The keys of the account, newest first',
    tag: 'account',
    auth: 'signed',
    permissions: ['read'],
    query: z.object({ status: z.enum(KEY_STATUSES).optional(), ...pageQuery }),
    responses: { 200: pageOf(ApiKeySchema).meta({ id: 'ApiKeyPage' }) },
  },
} as const satisfies Record<string, ApiRoute>;
