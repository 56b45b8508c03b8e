import { z } from 'zod';
import { EVENT_TYPES } from '../shared/events';

/** A webhook secret's length bounds (PRODUCT §10: used as given, spaces and punctuation allowed). */
export const SECRET_MIN = 8;
export const SECRET_MAX = 256;

const eventTypes = z.array(z.union([z.enum(EVENT_TYPES), z.literal('*')])).min(1).meta({ description: 'event types, or ["*"] for all' });
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

