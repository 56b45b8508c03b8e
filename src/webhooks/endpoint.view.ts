import { z } from 'zod';
import type { WebhookEndpointRow } from '../db/entities/webhooks';
import { timestamp, uuid } from '../shared/schema';

export const EndpointSchema = z
  .object({
    id: uuid(),
    url: z.string(),
    event_types: z.array(z.string()),
    description: z.string().nullable(),
    enabled: z.boolean(),
    secret_last4: z.string(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type EndpointView = z.infer<typeof EndpointSchema>;
/** Creation and rotation answer the secret once. */
export const EndpointWithSecretSchema = EndpointSchema.extend({ secret: z.string() }).meta({ id: 'WebhookEndpointWithSecret' });

export const presentEndpoint = (r: WebhookEndpointRow): EndpointView => ({
  id: r.id,
  url: r.url,
  event_types: JSON.parse(r.event_types) as string[],
  description: r.description,
  enabled: r.enabled,
  secret_last4: r.secret_last4,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
