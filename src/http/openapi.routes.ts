import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { mount, newRouter, type AppRouter } from './context';

export const openApiRoute = {
  method: 'get',
  path: '/v1/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This document (unsigned)',
  tag: 'meta',
  auth: 'none',
  responses: { 200: z.record(z.string(), z.unknown()) },
} as const satisfies ApiRoute;

/** GET /v1/openapi.json, unsigned: the document serialised once. */
export function openApiRoutes(document: () => Record<string, unknown>): AppRouter {
  const r = newRouter();
  let json: string | undefined;
  mount(r, openApiRoute, null, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = json ??= JSON.stringify(document());
  });
  return r;
}
