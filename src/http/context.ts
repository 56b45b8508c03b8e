import Router, { type RouterContext, type RouterMiddleware } from '@koa/router';
import { koaPath, type ApiRoute } from '../shared/api-route';

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

/** Mounts a handler chain at a declared route's method and path (the declaration is what the OpenAPI document shows). */
export function mount(r: AppRouter, route: ApiRoute, ...middleware: AppMiddleware[]): void {
  r.register(koaPath(route), [route.method.toUpperCase()], middleware);
}
