import { z } from 'zod';
import { EVENT_TYPES, isEventType } from '../shared/events';
import { validationError } from '../shared/errors';
import type { TargetGuard } from '../shared/target-guard';
import { checkShape } from '../shared/schema';

/** A webhook secret's length bounds (PRODUCT §10: used as given, spaces and punctuation allowed). */
export const SECRET_MIN = 8;
export const SECRET_MAX = 256;

const eventTypes = z
  .array(z.union([z.enum(EVENT_TYPES), z.literal('*')]))
  .min(1)
  .meta({ description: 'event types, or ["*"] for all' });
const secret = z.string().min(SECRET_MIN).max(SECRET_MAX).meta({ description: 'used as given (spaces and punctuation allowed)' });

export const CreateEndpointBody = z.strictObject({
  url: z.string().meta({ description: 'an https:// URL on a public host' }),
  event_types: eventTypes,
  description: z.string().max(500).nullable().optional(),
  enabled: z.boolean().optional(),
  secret: secret.optional(),
});
export const UpdateEndpointBody = z.strictObject({
  url: z.string().optional(),
  event_types: eventTypes.optional(),
  description: z.string().max(500).nullable().optional(),
  enabled: z.boolean().optional(),
});
export const RotateSecretBody = z.strictObject({ secret: secret.optional() });

export const ALL_EVENTS = '*';
export const MAX_DESCRIPTION = 500;

export interface EndpointInput {
  url?: string;
  /** Sorted, distinct event types, or `["*"]`. */
  event_types?: string[];
  description?: string | null;
  enabled?: boolean;
  secret?: string;
}

/** The body of POST /v1/webhooks/endpoints: url and event_types required, the rest optional. */
export async function parseCreateEndpoint(
  body: Record<string, unknown>,
  guard: TargetGuard,
  accountId: string,
): Promise<EndpointInput & { url: string; event_types: string[] }> {
  checkShape(CreateEndpointBody, body, 'a webhook endpoint create (url, event_types, description, enabled, secret)');
  const input = await parseFields(body, guard, accountId);
  if (body.secret !== undefined) input.secret = parseSecret(body.secret, 'secret');
  return { ...input, url: input.url!, event_types: input.event_types! };
}

/** The body of PATCH /v1/webhooks/endpoints/{id}: any of url, event_types, description, enabled. */
export async function parseUpdateEndpoint(body: Record<string, unknown>, guard: TargetGuard, accountId: string): Promise<EndpointInput> {
  if (body.secret !== undefined) throw validationError('secret', 'the secret is changed with POST /v1/webhooks/endpoints/{id}/rotate-secret');
  checkShape(UpdateEndpointBody, body, 'a webhook endpoint update (url, event_types, description, enabled)');
  return parseFields(body, guard, accountId);
}

/** The optional body of rotate-secret: a secret to use, else one is generated. */
export function parseRotateSecret(body: Record<string, unknown>): string | undefined {
  checkShape(RotateSecretBody, body, 'a webhook endpoint rotate-secret (secret)');
  return body.secret === undefined ? undefined : parseSecret(body.secret, 'secret');
}

async function parseFields(body: Record<string, unknown>, guard: TargetGuard, accountId: string): Promise<EndpointInput> {
  const input: EndpointInput = {};
  if (body.url !== undefined) input.url = await guard.checkUrl(body.url, 'url', accountId);
  if (body.event_types !== undefined) input.event_types = parseEventTypes(body.event_types);
  if (body.description !== undefined) {
    const d = body.description;
    if (d !== null && (typeof d !== 'string' || d.length > MAX_DESCRIPTION)) {
      throw validationError('description', `description must be a string of at most ${MAX_DESCRIPTION} characters, or null`);
    }
    input.description = d === '' ? null : d;
  }
  if (body.enabled !== undefined) {
    if (typeof body.enabled !== 'boolean') throw validationError('enabled', 'enabled must be true or false');
    input.enabled = body.enabled;
  }
  return input;
}

/** A list of the 21 event types without repeats, or exactly `["*"]`. */
export function parseEventTypes(value: unknown): string[] {
  const bad = (message: string) => validationError('event_types', message);
  if (!Array.isArray(value) || value.length === 0) throw bad('event_types must be a non-empty list of event types, or ["*"] for all');
  if (value.includes(ALL_EVENTS)) {
    if (value.length !== 1) throw bad('"*" subscribes to every event type and stands alone');
    return [ALL_EVENTS];
  }
  for (const t of value) {
    if (!isEventType(t)) throw bad(`${typeof t === 'string' ? `"${t.slice(0, 64)}"` : 'a value'} is not an event type; known: ${EVENT_TYPES.join(', ')}`);
  }
  if (new Set(value).size !== value.length) throw bad('event_types lists a type twice');
  return [...(value as string[])].sort();
}

/** A secret is used as given (spaces and punctuation allowed), within sane bounds and without control characters. */
function parseSecret(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < SECRET_MIN || value.length > SECRET_MAX || /[\u0000-\u001f\u007f]/.test(value)) {
    throw validationError(field, `${field} must be ${SECRET_MIN} to ${SECRET_MAX} characters without control characters`);
  }
  return value;
}

/** Whether an endpoint subscribed to `types` gets an event of `type` (a ping only reaches the endpoint it names). */
export const subscribes = (types: string[], type: string): boolean => type !== 'ping' && (types.includes(ALL_EVENTS) || types.includes(type));
