import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';

const Embed = z.object({ allowed_origins: z.array(z.string()) }).meta({ id: 'EmbedSettings' });
export const EmbedBody = z.strictObject({ allowed_origins: z.array(z.string()).meta({ description: 'origins such as https://shop.example' }) });

export const embedApi = {
  get: {
    method: 'get',
    path: '/v1/embed',
    operationId: 'getEmbed',
    summary: 'The origins allowed to embed the payment page',
    tag: 'embed',
    auth: 'signed',
    permissions: ['read'],
    responses: { 200: Embed },
  },
  set: {
    method: 'put',
    path: '/v1/embed',
    operationId: 'setEmbed',
    summary: 'Replace the origins allowed to embed the payment page',
    tag: 'embed',
    auth: 'signed',
    permissions: ['create_invoice'],
    body: EmbedBody,
    responses: { 200: Embed },
  },
} as const satisfies Record<string, ApiRoute>;
