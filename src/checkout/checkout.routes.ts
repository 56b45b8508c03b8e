import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { normalizeIp } from '../auth/ip-match';
import type { TokenBuckets } from '../auth/token-bucket';
import { newRouter, type AppContext, type AppMiddleware, type AppRouter } from '../http/context';
import { pathId } from '../http/path-id';
import { ApiError, notFound, validationError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import type { RefundPageSource } from '../refunds/refund-page.source';
import type { CheckoutService, PayerPage } from './checkout.service';
import { messagesOf, pickLanguage } from './messages';
import { pageCsp, renderNotFound, renderPage } from './page';
import { qrSvg } from './payment-uri';
import type { StatusStreams } from './status-stream';
import { MAX_ADDRESS_CHARS, payerRefundView, REFUND_CSP, renderRefundPage, type RefundError, type RefundPageInput } from './refund-page';

/** Requests a client address may make to the public pages per minute: a payer polls every 4 s; a page load is a few. */
export const PUBLIC_READS_PER_MINUTE = 300;
/** Coin choices a client address may post per minute: each may issue an address, so far fewer. */
export const COIN_CHOICES_PER_MINUTE = 20;
/** Address checks and confirmations a client address may post to refund pages per minute (a payer needs a few). */
export const REFUND_POSTS_PER_MINUTE = 20;
/** The largest body a refund page's post may have: one address. */
export const REFUND_BODY_MAX_BYTES = 1024;
/** A refund link's token: opaque base64url, 22 to 64 characters; anything else is 404 without a lookup. */
const REFUND_TOKEN = /^[A-Za-z0-9_-]{22,64}$/;

export interface CheckoutRouteDeps {
  checkout: CheckoutService;
  /** Per-client-address buckets, shared by every public route (keys are prefixed by route). */
  buckets: TokenBuckets;
  /** The refunds' payer pages (GET /pay/{id}/refund/{token} and below); without it those routes are 404. */
  refundPages?: RefundPageSource;
  /** The status event streams (GET /pay/{id}/events); without it that route is 404. */
  streams?: StatusStreams;
}

/** Headers of every public answer: no sniffing, no referrer, never cached by a proxy. */
const publicHeaders: AppMiddleware = async (ctx, next) => {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  await next();
};

/**
 * The hosted payment page (PRODUCT §11): GET /pay/{id}, GET /pay/{id}/status, GET /pay/{id}/events
 * (the status as Server-Sent Events), POST /pay/{id}/coin.
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

  // The status as Server-Sent Events (issue 35): the view now and after each committed change, closed when final.
  r.get('/:id/events', publicHeaders, limit('pay', PUBLIC_READS_PER_MINUTE), async (ctx) => {
    const streams = deps.streams;
    if (!streams) throw notFound('route');
    const id = idOf(ctx.params.id);
    const view = (await deps.checkout.page(id)).view;
    const ip = normalizeIp(ctx.ip);
    if (!streams.admits(ip))
      throw new ApiError(429, 'rate_limited', 'too many open status streams from this address', { scope: 'ip', retry_after: 60 }, { 'Retry-After': '60' });
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    // Proxies that honour it pass events on as they come.
    ctx.set('X-Accel-Buffering', 'no');
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    const out = new PassThrough();
    ctx.status = 200;
    ctx.type = 'text/event-stream; charset=utf-8';
    ctx.body = out;
    streams.start(id, ip, out, view);
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

  refundRoutes(r, deps, limit);
  return r;
}

/**
 * The payer's refund page (PRODUCT §16): GET /pay/{id}/refund/{token} (HTML), GET .../status
 * (JSON), POST .../check and POST .../address ({to_address}, JSON, or urlencoded from the page's
 * forms without JavaScript). Reads share the payment page's per-client allowance, so guessing
 * tokens costs what guessing invoice ids does; posts have their own, smaller one. A token of the
 * wrong shape is 404 without asking the source.
 */
function refundRoutes(r: AppRouter, deps: CheckoutRouteDeps, limit: (scope: string, perMinute: number) => AppMiddleware): void {
  const link = (ctx: AppContext): { source: RefundPageSource; id: string; token: string } => {
    const source = deps.refundPages;
    const token = ctx.params.token ?? '';
    if (source === undefined || !REFUND_TOKEN.test(token)) throw notFound('refund');
    return { source, id: pathId(ctx.params.id, 'refund'), token };
  };
  const viewOf = async (source: RefundPageSource, id: string, token: string) => {
    const view = await source.view(id, token);
    if (view === null) throw notFound('refund');
    return payerRefundView(view);
  };
  const html = (ctx: AppContext, lang: string, input: Omit<RefundPageInput, 'lang' | 'm'>, status = 200): void => {
    ctx.status = status;
    ctx.set('Content-Security-Policy', REFUND_CSP);
    ctx.type = 'text/html; charset=utf-8';
    const body = Buffer.from(renderRefundPage({ ...input, lang, m: messagesOf(lang) }));
    if (acceptsGzip(ctx.get('Accept-Encoding'))) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = gzipSync(body);
    } else {
      ctx.body = body;
    }
  };
  const language = (ctx: AppContext): string => {
    const lang = pickLanguage(ctx.query.lang, ctx.get('Accept-Language'));
    ctx.set('Content-Language', lang);
    ctx.set('Vary', 'Accept-Language, Accept-Encoding');
    return lang;
  };
  /** A 404 of an HTML route is the payment page's 404 page. */
  const orNotFoundPage = async (ctx: AppContext, lang: string, run: () => Promise<void>): Promise<void> => {
    try {
      await run();
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 404) throw err;
      notFoundPage(ctx, lang);
    }
  };
  const reads = limit('pay', PUBLIC_READS_PER_MINUTE);
  const posts = limit('pay-refund', REFUND_POSTS_PER_MINUTE);
  const jsonOnly: AppMiddleware = async (ctx, next) => {
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    await next();
  };

  r.get('/:id/refund/:token', publicHeaders, reads, async (ctx) => {
    const lang = language(ctx);
    await orNotFoundPage(ctx, lang, async () => {
      const { source, id, token } = link(ctx);
      html(ctx, lang, { view: await viewOf(source, id, token), here: token });
    });
  });

  r.get('/:id/refund/:token/status', publicHeaders, reads, jsonOnly, async (ctx) => {
    const { source, id, token } = link(ctx);
    ctx.body = await viewOf(source, id, token);
  });

  for (const action of ['check', 'address'] as const) {
    r.post(`/:id/refund/:token/${action}`, publicHeaders, posts, async (ctx) => {
      if (!isFormPost(ctx)) {
        ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
        const { source, id, token } = link(ctx);
        smallBody(ctx);
        const address = refundAddress(ctx.state.body);
        if (action === 'check') {
          const { to_address, network, network_name } = await source.check(id, token, address);
          ctx.body = { to_address, network, network_name };
        } else {
          ctx.body = payerRefundView(await source.provide(id, token, address));
        }
        return;
      }
      // The page's forms without JavaScript: a check answers the page asking to confirm the
      // address shown back; a confirmation goes back to the page (303); a refusal shows the page
      // with its message where it belongs.
      const lang = language(ctx);
      await orNotFoundPage(ctx, lang, async () => {
        const { source, id, token } = link(ctx);
        smallBody(ctx);
        const fields = new URLSearchParams(ctx.state.rawBody.toString('utf8'));
        const entered = (fields.get('to_address') ?? '').slice(0, MAX_ADDRESS_CHARS);
        const here = `../${token}`;
        try {
          const address = refundAddress(Object.fromEntries(fields));
          if (action === 'check') {
            const { to_address, network, network_name } = await source.check(id, token, address);
            html(ctx, lang, { view: await viewOf(source, id, token), here, checked: { to_address, network, network_name }, entered: address });
            return;
          }
          await source.provide(id, token, address);
          ctx.status = 303;
          ctx.set('Location', here);
        } catch (err) {
          if (!(err instanceof ApiError) || err.status >= 500 || err.status === 404) throw err;
          const kind = refundErrorOf(err, entered);
          const view = await viewOf(source, id, token);
          const checked =
            action === 'address' && (kind === 'limited' || kind === 'other')
              ? { to_address: entered, network: view.network, network_name: view.network_name }
              : null;
          html(ctx, lang, { view, here, checked, entered, error: { kind, at: checked ? 'confirm' : 'address' } }, err.status);
        }
      });
    });
  }
}

/** A refund page's post carries one address: a larger body is refused before it is parsed. */
function smallBody(ctx: AppContext): void {
  if (ctx.state.rawBody.length > REFUND_BODY_MAX_BYTES) {
    throw new ApiError(413, 'payload_too_large', `request body is larger than ${REFUND_BODY_MAX_BYTES} bytes`, { limit_bytes: REFUND_BODY_MAX_BYTES });
  }
}

/** The one field of a refund page's post, trimmed: a string of at most MAX_ADDRESS_CHARS, no control characters. */
function refundAddress(body: Record<string, unknown>): string {
  for (const k of Object.keys(body)) if (k !== 'to_address') throw validationError(k, `${k} is not a field of a refund address`);
  const raw = body.to_address;
  if (typeof raw !== 'string') throw validationError('to_address', 'to_address must be a string');
  const address = raw.trim();
  if (address === '' || address.length > MAX_ADDRESS_CHARS || /[\u0000-\u001f\u007f]/.test(address)) {
    throw validationError('to_address', `to_address must be an address of 1 to ${MAX_ADDRESS_CHARS} characters`);
  }
  return address;
}

/** What the page tells the payer about a refused post. */
function refundErrorOf(err: ApiError, entered: string): RefundError {
  if (err.status === 429) return 'limited';
  if (err.status === 409) return 'conflict';
  if (err.code === 'address_refused' || err.code === 'validation_error') return entered.trim() === '' ? 'empty' : 'address';
  return 'other';
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
