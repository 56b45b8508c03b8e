import { z } from 'zod';
import type { DeliveryStatus, WebhookDeliveryRow } from '../db/entities/webhooks';
import { timestamp, uuid, type Same } from '../shared/schema';
import { EVENT_TYPES } from '../shared/events';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'exhausted'];

export const DeliverySchema = z
  .object({
    id: uuid(),
    event_id: uuid(),
    event_type: z.string(),
    endpoint_id: uuid().nullable(),
    url: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'exhausted']),
    attempts: z.number().int(),
    next_attempt_at: timestamp().nullable(),
    last_response_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryView = z.infer<typeof DeliverySchema>;

export const AttemptSchema = z.object({
  number: z.number().int(),
  url: z.string(),
  at: timestamp(),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
});
export type AttemptView = z.infer<typeof AttemptSchema>;
export const DeliveryWithAttemptsSchema = DeliverySchema.extend({ attempt_log: z.array(AttemptSchema) }).meta({ id: 'WebhookDeliveryWithAttempts' });
const sameStatus: Same<DeliveryView['status'], DeliveryStatus> = true;
void sameStatus;

export const presentDelivery = (r: WebhookDeliveryRow): DeliveryView => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  endpoint_id: r.endpoint_id,
  url: r.url,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_response_status: r.last_response_status,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
