import { gzipSync } from 'node:zlib';
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
  const limit =
    (scope: string, perMinute: number): AppMiddleware =>
    async (ctx, next) => {
      const take = deps.buckets.take(`${scope}:${normalizeIp(ctx.ip)}`, perMinute);
      if (!take.allowed) {
        throw new ApiError(
          429,
          'rate_limited',
          'too many requests from this address',
          { scope: 'ip', retry_after: take.retryAfterSeconds },
          { 'Retry-After': String(take.retryAfterSeconds) },
        );
      }
      await next();
    };
  // What a view renders to, kept while the view stays the same: the service re-reads an invoice
  // at most once a second, and a re-read that changed nothing costs no rendering, no QR code and
  // no compression. Bodies are kept as bytes (gzip too, made once), so a request only copies them.
  const serialized = new WeakMap<PayerPage, Buffer>();
  const viewBytes = (page: PayerPage): Buffer => {
    let json = serialized.get(page);
    if (json === undefined) serialized.set(page, (json = Buffer.from(JSON.stringify(page.view))));
    return json;
  };
  const renditions = new Map<string, Rendition>();
  const idOf = (raw: string | undefined) => pathId(raw, 'invoice');

  r.get('/:id', publicHeaders, limit('pay', PUBLIC_READS_PER_MINUTE), async (ctx) => {
    const lang = pickLanguage(ctx.query.lang, ctx.get('Accept-Language'));
    ctx.set('Content-Language', lang);
    ctx.set('Vary', 'Accept-Language, Accept-Encoding');
    try {
      const id = idOf(ctx.params.id);
      const page = await deps.checkout.page(id);
      const key = `${id} ${lang}`;
      const source = viewBytes(page);
      const frames = page.frameAncestors.join(' ');
      let out = renditions.get(key);
      if (out === undefined || out.frames !== frames || !out.source.equals(source)) {
        const { view, frameAncestors } = page;
        const html = renderPage({ view, lang, m: messagesOf(lang), qr: view.payment_uri ? await qrSvg(view.payment_uri) : null, parents: frameAncestors });
        out = { source, frames, csp: pageCsp(frameAncestors), body: Buffer.from(html), gzipped: null };
        remember(renditions, key, out);
      }
      ctx.set('Content-Security-Policy', out.csp);
      ctx.type = 'text/html; charset=utf-8';
      if (acceptsGzip(ctx.get('Accept-Encoding'))) {
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = out.gzipped ??= gzipSync(out.body);
      } else {
        ctx.body = out.body;
      }
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
      notFoundPage(ctx, lang);
    }
  });

  r.get('/:id/status', publicHeaders, limit('pay', PUBLIC_READS_PER_MINUTE), async (ctx) => {
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    const page = await deps.checkout.page(idOf(ctx.params.id));
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = viewBytes(page);
  });

  r.post('/:id/coin', publicHeaders, limit('pay-coin', COIN_CHOICES_PER_MINUTE), async (ctx) => {
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    const id = idOf(ctx.params.id);
    if (isFormPost(ctx)) {
      // The page's own form, without JavaScript: choose, then back to the page, which shows the
      // coin fixed (this choice, or an earlier one) or, when refused, what can still be done.
      const fields = new URLSearchParams(ctx.state.rawBody.toString('utf8'));
      const coin = fields.get('coin_id') ?? '';
      try {
        if (!isUuid(coin)) throw validationError('coin_id', "coin_id must be a coin id (uuid) from the invoice's choices");
        await deps.checkout.chooseCoin(id, coin.toLowerCase());
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500 || err.status === 404) throw err;
      }
      ctx.status = 303;
      ctx.set('Location', `../${id}`);
      return;
    }
    const body = ctx.state.body;
    for (const k of Object.keys(body)) if (k !== 'coin_id') throw validationError(k, `${k} is not a field of a coin choice`);
    if (!isUuid(body.coin_id)) throw validationError('coin_id', "coin_id must be a coin id (uuid) from the invoice's choices");
    ctx.body = await deps.checkout.chooseCoin(id, body.coin_id.toLowerCase());
  });

  return r;
}

/** A form post of the page (urlencoded), not the script's JSON. */
function isFormPost(ctx: AppContext): boolean {
  return (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** A rendered page with the view it was rendered from. */
interface Rendition {
  source: Buffer;
  frames: string;
  csp: string;
  body: Buffer;
  gzipped: Buffer | null;
}

/** Renditions kept: past it the oldest goes (a payer's page is re-rendered at worst). */
const RENDITIONS_MAX = 5000;

function remember(m: Map<string, Rendition>, key: string, r: Rendition): void {
  m.delete(key);
  m.set(key, r);
  if (m.size > RENDITIONS_MAX) m.delete(m.keys().next().value!);
}

/** Whether an Accept-Encoding header takes gzip (named, or `*`, without `q=0`). */
export function acceptsGzip(header: string): boolean {
  if (header === '') return false;
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name!.trim().toLowerCase();
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

function notFoundPage(ctx: AppContext, lang: string): void {
  const m = messagesOf(lang);
  ctx.status = 404;
  ctx.set('Content-Security-Policy', pageCsp([]));
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = renderNotFound(lang, m);
}
