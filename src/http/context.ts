import Router, { type RouterContext, type RouterMiddleware } from '@koa/router';
import { koaPath, type ApiRoute, type Permission } from '../shared/api-route';

/** What the middleware chain leaves on ctx.state for handlers. */
export interface AppState {
  requestId: string;
  /** The request body exactly as received (empty for none); the signature is computed over it. */
  rawBody: Buffer;
  /** The parsed JSON object body ({} when the request had none). */
  body: Record<string, unknown>;
  /** Set by the auth middleware on signed routes. */
  auth?: unknown;
}

export type AppContext = RouterContext<AppState>;
export type AppMiddleware = RouterMiddleware<AppState>;
export type AppRouter = Router<AppState>;
export const newRouter = (prefix?: string): AppRouter => new Router<AppState>(prefix ? { prefix } : {});

/** What `mount` builds a route's guards from (the auth middleware's factories). */
export interface RouteGuards {
  /** Signed, with one of `permissions`; `null`: public unless signed (then it needs read). */
  authenticate: (permissions: Permission | readonly Permission[] | null) => AppMiddleware;
  /** Signed, the permission left to the handler. */
  signed: () => AppMiddleware;
  /** The per-key Idempotency-Key middleware. */
  idempotent: AppMiddleware;
}

/**
 * Mounts a handler at a declared route's method and path, its guards built from the declaration,
 * so what the OpenAPI document shows is what is enforced: the authentication it declares (`none`,
 * `optional`, or `signed` with one of its `permissions` unless the handler decides them), then
 * the Idempotency-Key middleware when it is `idempotent` (unless its service binds the key).
 */
export function mount(r: AppRouter, route: ApiRoute, guards: RouteGuards | null, ...handlers: AppMiddleware[]): void {
  const chain: AppMiddleware[] = [];
  if (route.auth !== 'none') {
    if (!guards) throw new Error(`route ${route.operationId} needs the auth guards`);
    if (route.auth === 'optional') chain.push(guards.authenticate(null));
    else chain.push(route.permissionByHandler || !route.permissions ? guards.signed() : guards.authenticate(route.permissions));
    if (route.idempotent && !route.idempotencyByService) chain.push(guards.idempotent);
  }
  r.register(koaPath(route), [route.method.toUpperCase()], [...chain, ...handlers]);
}
