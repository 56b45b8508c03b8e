import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../shared/errors';
import type { Logger } from '../shared/logger';
import { announcesBody, parseJsonObject, readRawBody } from './body';
import type { AppContext, AppRouter, AppState } from './context';

export const API_VERSION = 'v1';
export const SUPPORTED_VERSIONS = [API_VERSION];

export interface AppOptions {
  logger: Logger;
  /**
   * Proxy hops in front of the app: the client IP is the N-th X-Forwarded-For address from the
   * right (each proxy appends the address it was reached from, so the client's own entries, to the
   * left, are never taken). 0: the connection's address, and the header is ignored.
   */
  trustProxy: number;
  /** Checks made before the body is read (a blocked address, missing signature headers): throwing refuses the request. */
  screen?: (ctx: Koa.ParameterizedContext<AppState>, hasBody: boolean) => void;
  /** Routers mounted in order (each carries its own prefix and per-route middleware). */
  routers: AppRouter[];
  /** Told of every answered request with its duration in seconds (the metrics). */
  observe?: (ctx: Koa.Context, seconds: number) => void;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const NO_BODY = Buffer.alloc(0);

/**
 * A request's state. The body is parsed when a handler first reads it: on a signed route that is
 * after authentication, so a request that is not validly signed is refused (and counted against
 * its address) unparsed.
 */
class RequestState implements AppState {
  rawBody: Buffer = NO_BODY;
  auth?: unknown;
  private parsed: Record<string, unknown> | undefined;
  private contentType: string | undefined;
  private takesBody = false;
  private id: string | undefined;

  /** Made when first asked for (an answer that names it: a 500, an export). */
  get requestId(): string {
    return (this.id ??= randomUUID());
  }

  received(raw: Buffer, takesBody: boolean, contentType: string | undefined): void {
    this.rawBody = raw;
    this.takesBody = takesBody;
    this.contentType = contentType;
  }

  get body(): Record<string, unknown> {
    return (this.parsed ??= this.takesBody ? parseJsonObject(this.rawBody, this.contentType) : {});
  }
}

/**
 * The Koa application of the merchant API and the payment page, without `listen`. Its
 * conventions hold on every route, including those added later: the envelope for every failure,
 * `X-API-Version` on every response, the version check, the 1 MiB body limit, the raw body kept for
 * signatures, JSON-object bodies, and 404 for unknown routes and methods.
 */
export function createApp(opts: AppOptions): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: opts.trustProxy > 0, maxIpsCount: opts.trustProxy });
  const log = opts.logger;

  const observe = opts.observe;
  const routes = dispatch(opts.routers);
  app.use(async (ctx, next) => {
    const started = observe ? performance.now() : 0;
    const state = new RequestState();
    ctx.state = state;
    // Headers are read and set on Node's objects: koa's ctx.get and ctx.set cost more on every request.
    ctx.res.setHeader('X-API-Version', API_VERSION);
    try {
      const asked = ctx.req.headers['x-api-version'];
      if (asked !== undefined && asked !== '' && !SUPPORTED_VERSIONS.includes(asked as string)) {
        throw new ApiError(400, 'unsupported_api_version', `API version ${JSON.stringify(asked)} is not served`, {
          supported: SUPPORTED_VERSIONS,
        });
      }
      const hasBody = announcesBody(ctx.req);
      opts.screen?.(ctx, hasBody);
      state.received(hasBody ? await readRawBody(ctx.req) : NO_BODY, BODY_METHODS.has(ctx.method), ctx.req.headers['content-type'] || undefined);
      await routes(ctx, next);
      if (ctx.body === undefined && ctx.status === 404) {
        throw new ApiError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      respondWithError(ctx as AppContext, err, log);
    }
    observe?.(ctx, (performance.now() - started) / 1000);
  });

  // Silence Koa's default stderr printing: every error is answered and logged above.
  app.on('error', () => undefined);
  return app;
}

/** Bounds of a literal path segment: a segment with anything else (a parameter, a pattern) matches more than itself. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;
const SLASH = 0x2f;

/** The first two segments of a path, lower-case, empty ones skipped (`/v1/invoices/x/` → `/v1/invoices`). */
function pathKey(path: string): string {
  let key = '';
  let at = 0;
  for (let segments = 0; segments < 2;) {
    while (path.charCodeAt(at) === SLASH) at++;
    if (at >= path.length) break;
    let end = path.indexOf('/', at);
    if (end === -1) end = path.length;
    key += `/${path.slice(at, end)}`;
    at = end;
    segments++;
  }
  return key === '' ? '/' : key.toLowerCase();
}

/**
 * The routers as one middleware: a request goes only to the routers with a route under its path's
 * first two segments (those are literal in every route but the admin's, whose routers see every
 * request), in their order, instead of through every router before the right one (each of which
 * would match the whole path against all its routes). Routers match paths case-insensitively with
 * an optional trailing slash, so the key is lower-case without empty segments.
 */
function dispatch(routers: AppRouter[]): Koa.Middleware<AppState> {
  type Mw = (ctx: Koa.ParameterizedContext<AppState>, next: () => Promise<unknown>) => Promise<unknown>;
  const mounted = routers.map((r) => {
    let keys: Set<string> | null = new Set<string>();
    for (const layer of r.stack) {
      const path: unknown = layer.path;
      const literal =
        typeof path === 'string' &&
        layer.methods.length > 0 &&
        path
          .split('/')
          .filter((x) => x !== '')
          .slice(0, 2)
          .every((x) => LITERAL_SEGMENT.test(x));
      if (!literal) {
        keys = null;
        break;
      }
      keys.add(pathKey(path as string));
    }
    return { keys, middleware: r.routes() as unknown as Mw };
  });
  const chain = (mws: Mw[]): Mw => {
    if (mws.length === 1) return mws[0]!;
    const run = (i: number, ctx: Koa.ParameterizedContext<AppState>, next: () => Promise<unknown>): Promise<unknown> =>
      i === mws.length ? next() : mws[i]!(ctx, () => run(i + 1, ctx, next));
    return (ctx, next) => run(0, ctx, next);
  };
  const any = mounted.filter((m) => m.keys === null).map((m) => m.middleware);
  const byKey = new Map<string, Mw>();
  for (const key of new Set(mounted.flatMap((m) => [...(m.keys ?? [])]))) {
    byKey.set(key, chain(mounted.filter((m) => m.keys === null || m.keys.has(key)).map((m) => m.middleware)));
  }
  const rest: Mw = any.length > 0 ? chain(any) : (_ctx, next) => next();
  return (ctx, next) => (byKey.get(pathKey(ctx.path)) ?? rest)(ctx, next);
}

/** Turns any thrown value into SPEC's envelope on ctx (unexpected ones: logged, 500 with a request id). */
export function respondWithError(ctx: AppContext, err: unknown, log: Logger): void {
  let apiErr: ApiError;
  if (err instanceof ApiError) {
    apiErr = err;
  } else {
    log.error('unexpected error', {
      request_id: ctx.state.requestId,
      method: ctx.method,
      // A refund link's token is a bearer secret: never in a log line.
      path: ctx.path.replace(/\/refund\/[^/]+/, '/refund/[token]'),
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    apiErr = new ApiError(500, 'internal_error', 'internal error; the request may or may not have been applied', {
      request_id: ctx.state.requestId,
    });
  }
  ctx.status = apiErr.status;
  for (const [k, v] of Object.entries(apiErr.headers)) ctx.set(k, v);
  ctx.body = apiErr.toBody();
  if (apiErr.status === 413) ctx.set('Connection', 'close');
}
