import { EntitySchema } from 'typeorm';

/** A merchant's webhook endpoint (PRODUCT §10). The secret is sealed; only its last 4 characters are shown. */
export interface WebhookEndpointRow {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event types, or `["*"]` for all. */
  event_types: string;
  description: string | null;
  enabled: boolean;
  secret_sealed: string;
  secret_last4: string;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'exhausted';

/**
 * One event sent to one target: an endpoint, or (endpoint_id null) an invoice's own webhook_url.
 * The schedule lives here: `next_attempt_at` is when the next attempt falls due (null: none
 * planned), `schedule_attempts` counts the attempts of the current schedule (a retry starts a new
 * one), `attempts` every attempt ever made.
 */
export interface WebhookDeliveryRow {
  id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string | null;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  schedule_attempts: number;
  next_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** One HTTP attempt of a delivery, written once it ended (or, after a crash, at the next start as interrupted). */
export interface WebhookAttemptRow {
  id: string;
  delivery_id: string;
  number: number;
  url: string;
  started_at: string;
  finished_at: string | null;
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
}

/** The account's invoice-callback secret: it signs deliveries to invoices' own webhook_url. */
export interface CallbackSecretRow {
  account_id: string;
  secret_sealed: string;
  secret_last4: string;
  created_at: string;
  updated_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };

export const WebhookEndpointEntity = new EntitySchema<WebhookEndpointRow>({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    url: { type: 'text' },
    event_types: { type: 'text' },
    description: { type: 'text', nullable: true },
    enabled: { type: 'boolean' },
    secret_sealed: { type: 'text' },
    secret_last4: { type: 'varchar', length: 8 },
    created_at: ts,
    updated_at: ts,
  },
});

export const WebhookDeliveryEntity = new EntitySchema<WebhookDeliveryRow>({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    event_id: { type: 'varchar', length: 36 },
    event_type: { type: 'varchar', length: 48 },
    endpoint_id: { type: 'varchar', length: 36, nullable: true },
    url: { type: 'text' },
    status: { type: 'varchar', length: 16 },
    attempts: { type: 'integer' },
    schedule_attempts: { type: 'integer' },
    next_attempt_at: { ...ts, nullable: true },
    last_response_status: { type: 'integer', nullable: true },
    last_error: { type: 'text', nullable: true },
    created_at: ts,
    updated_at: ts,
  },
});

export const WebhookAttemptEntity = new EntitySchema<WebhookAttemptRow>({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    delivery_id: { type: 'varchar', length: 36 },
    number: { type: 'integer' },
    url: { type: 'text' },
    started_at: ts,
    finished_at: { ...ts, nullable: true },
    response_status: { type: 'integer', nullable: true },
    error: { type: 'text', nullable: true },
    duration_ms: { type: 'integer', nullable: true },
  },
});

export const CallbackSecretEntity = new EntitySchema<CallbackSecretRow>({
  name: 'CallbackSecret',
  tableName: 'webhook_callback_secrets',
  columns: {
    account_id: { type: 'varchar', length: 36, primary: true },
    secret_sealed: { type: 'text' },
    secret_last4: { type: 'varchar', length: 8 },
    created_at: ts,
    updated_at: ts,
  },
});
