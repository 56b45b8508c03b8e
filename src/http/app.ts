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

/**
 * A request's state. The body is parsed when a handler first reads it: on a signed route that is
 * after authentication, so a request that is not validly signed is refused (and counted against
 * its address) unparsed.
 */
class RequestState implements AppState {
  rawBody: Buffer = Buffer.alloc(0);
  auth?: unknown;
  private parsed: Record<string, unknown> | undefined;
  private contentType: string | undefined;
  private takesBody = false;

  constructor(readonly requestId: string) {}

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
  app.use(async (ctx, next) => {
    const started = observe ? performance.now() : 0;
    const state = new RequestState(randomUUID());
    ctx.state = state;
    ctx.set('X-API-Version', API_VERSION);
    try {
      const asked = ctx.get('X-API-Version');
      if (asked !== '' && !SUPPORTED_VERSIONS.includes(asked)) {
        throw new ApiError(400, 'unsupported_api_version', `API version ${JSON.stringify(asked)} is not served`, {
          supported: SUPPORTED_VERSIONS,
        });
      }
      opts.screen?.(ctx, announcesBody(ctx.req));
      state.received(await readRawBody(ctx.req), BODY_METHODS.has(ctx.method), ctx.get('Content-Type') || undefined);
      await next();
      if (ctx.body === undefined && ctx.status === 404) {
        throw new ApiError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      respondWithError(ctx as AppContext, err, log);
    }
    observe?.(ctx, (performance.now() - started) / 1000);
  });

  for (const r of opts.routers) app.use(r.routes());
  // Silence Koa's default stderr printing: every error is answered and logged above.
  app.on('error', () => undefined);
  return app;
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
      path: ctx.path,
      error: err instanceof Error ? err.stack ?? err.message : String(err),
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
