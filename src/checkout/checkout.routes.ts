import { normalizeIp } from '../auth/ip-match';
import type { TokenBuckets } from '../auth/token-bucket';
import { newRouter, type AppContext, type AppMiddleware, type AppRouter } from '../http/context';
import { pathId } from '../http/path-id';
import { ApiError, notFound, validationError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import type { CheckoutService, PayerPage } from './checkout.service';
import { messagesOf, pickLanguage } from './messages';
import { pageCsp, renderNotFound, renderPage } from './page';
import { qrSvg } from './payment-uri';

/** Requests a client address may make to the public pages per minute: a payer polls every 4 s; a page load is a few. */
export const PUBLIC_READS_PER_MINUTE = 300;
/** Coin choices a client address may post per minute: each may issue an address, so far fewer. */
export const COIN_CHOICES_PER_MINUTE = 20;

export interface CheckoutRouteDeps {
  checkout: CheckoutService;
  /** Per-client-address buckets, shared by every public route (keys are prefixed by route). */
  buckets: TokenBuckets;
}

/** Headers of every public answer: no sniffing, no referrer, never cached by a proxy. */
const publicHeaders: AppMiddleware = async (ctx, next) => {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  await next();
};

/**
 * The hosted payment page (PRODUCT §11): GET /pay/{id}, GET /pay/{id}/status, POST /pay/{id}/coin.
 * Unsigned, so each client address is held to a request rate, and reads are served from the
 * checkout service's one-second cache.
 */
export function checkoutRoutes(deps: CheckoutRouteDeps): AppRouter {
  const r = newRouter('/pay');
  const limit = (scope: string, perMinute: number): AppMiddleware => async (ctx, next) => {
    const take = deps.buckets.take(`${scope}:${normalizeIp(ctx.ip)}`, perMinute);
    if (!take.allowed) {
      throw new ApiError(429, 'rate_limited', 'too many requests from this address', { scope: 'ip', retry_after: take.retryAfterSeconds }, { 'Retry-After': String(take.retryAfterSeconds) });
    }
    await next();
  };
  // What a cached view (at most a second old) renders to, kept with it: a payer's polls, and many
  // payers of one invoice, cost one rendering a second.
  const rendered = new WeakMap<PayerPage, Map<string, string>>();
  const serialized = new WeakMap<PayerPage, string>();
  const idOf = (raw: string | undefined) => pathId(raw, 'invoice');

  r.get('/:id', publicHeaders, limit('pay', PUBLIC_READS_PER_MINUTE), async (ctx) => {
    const lang = pickLanguage(ctx.query.lang, ctx.get('Accept-Language'));
    const m = messagesOf(lang);
    ctx.set('Content-Language', lang);
    ctx.vary('Accept-Language');
    try {
      const page = await deps.checkout.page(idOf(ctx.params.id));
      const { view, frameAncestors } = page;
      ctx.set('Content-Security-Policy', pageCsp(frameAncestors));
      ctx.type = 'text/html; charset=utf-8';
      const byLang = rendered.get(page) ?? new Map<string, string>();
      rendered.set(page, byLang);
      let html = byLang.get(lang);
      if (html === undefined) {
        html = renderPage({ view, lang, m, qr: view.payment_uri ? await qrSvg(view.payment_uri) : null, parents: frameAncestors });
        byLang.set(lang, html);
      }
      ctx.body = html;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
      notFoundPage(ctx, lang);
    }
  });

  r.get('/:id/status', publicHeaders, limit('pay', PUBLIC_READS_PER_MINUTE), async (ctx) => {
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    const page = await deps.checkout.page(idOf(ctx.params.id));
    let json = serialized.get(page);
    if (json === undefined) serialized.set(page, (json = JSON.stringify(page.view)));
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = json;
  });

  r.post('/:id/coin', publicHeaders, limit('pay-coin', COIN_CHOICES_PER_MINUTE), async (ctx) => {
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    const id = idOf(ctx.params.id);
    const body = ctx.state.body;
    for (const k of Object.keys(body)) if (k !== 'coin_id') throw validationError(k, `${k} is not a field of a coin choice`);
    if (!isUuid(body.coin_id)) throw validationError('coin_id', 'coin_id must be a coin id (uuid) from the invoice\'s choices');
    ctx.body = await deps.checkout.chooseCoin(id, body.coin_id.toLowerCase());
  });

  return r;
}

function notFoundPage(ctx: AppContext, lang: string): void {
  const m = messagesOf(lang);
  ctx.status = 404;
  ctx.set('Content-Security-Policy', pageCsp([]));
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = renderNotFound(lang, m);
}
