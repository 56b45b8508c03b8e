import type { Config } from '../config/schema';
import { API_VERSION } from '../http/app';
import type { AppContext, AppMiddleware, AppState } from '../http/context';
import type { ParameterizedContext } from 'koa';
import { ApiError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import type { IpBlocker } from './ip-blocker';
import { blockKey, normalizeIp } from './ip-match';
import type { KeyEntry, KeyRegistry } from './key-registry';
import type { KeyUsage } from './key-usage';
import { ReplayShareFullError, type ReplayGuard } from './replay-guard';
import { Hmac, macKey } from './hmac';
import { canonicalString, checkTimestamp } from './signature';
import { testKeysDocUrl } from './test-keys.routes';
import type { TakeResult, TokenBuckets } from './token-bucket';

export type Permission = 'read' | 'create_invoice' | 'create_address' | 'withdraw';
export const PERMISSIONS: readonly Permission[] = ['read', 'create_invoice', 'create_address', 'withdraw'];

/** What a signed request carries on to handlers. */
export interface AuthContext {
  apiKeyId: string;
  keyId: string;
  accountId: string;
  permissions: ReadonlySet<string>;
  usedSecret: 'current' | 'previous';
  entry: KeyEntry;
}

const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Service-HMAC-SHA256' };
const HEADERS = ['X-API-Key', 'X-Timestamp', 'X-Signature'] as const;

/** The signature headers as Node keeps them (lower-case names; a repeated x- header is joined, never an array). */
interface SignatureHeaders {
  'x-api-key'?: string;
  'x-timestamp'?: string;
  'x-signature'?: string;
}
const signatureHeaders = (ctx: ParameterizedContext<AppState>): SignatureHeaders => ctx.req.headers as SignatureHeaders;
/** The first signature header missing or empty (as `ctx.get` reads them), if any. */
function missingOf(h: SignatureHeaders): (typeof HEADERS)[number] | undefined {
  if (!h['x-api-key']) return 'X-API-Key';
  if (!h['x-timestamp']) return 'X-Timestamp';
  if (!h['x-signature']) return 'X-Signature';
  return undefined;
}
const unsigned = (h: SignatureHeaders): boolean => !h['x-api-key'] && !h['x-timestamp'] && !h['x-signature'];
/** Compared against when the key is unknown, so unknown and known keys cost the same work. */
const DUMMY_MAC = macKey('dummy-secret-for-constant-work-0000000000000');
const KEY_ID = /^ck_(live|test)_[0-9A-Za-z]{24}$/;

const unauthorized = (code: string, message: string, details: Record<string, unknown> = {}) => new ApiError(401, code, message, details, WWW_AUTHENTICATE);
const missingHeader = (header: string) => unauthorized('auth.missing_header', `the ${header} header is required`, { field: header });

/** The merchant API: every route under it that takes a body is signed. */
const SIGNED_API_PREFIX = `/${API_VERSION}/`;

/** A request signed with a valid secret of an active key, from an allowed address. */
interface SignedKey {
  entry: KeyEntry;
  usedSecret: 'current' | 'previous';
  signature: string;
  /** What the replay guard keeps of it (see Hmac.replayMark). */
  mark: string;
  timestampSeconds: number;
  nowMs: number;
  /** The client's address, normalised. */
  ip: string;
}

/** What checkSignature read of a request before the key's lookup. */
interface SignedRequest {
  canonical: string;
  signature: string;
  timestampSeconds: number;
  nowMs: number;
  ip: string;
}

const keyOverLimit = (retryAfterSeconds: number, message: string) =>
  new ApiError(429, 'rate_limited', message, { scope: 'key', retry_after: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });

/**
 * Request signing as SPEC orders the checks: headers, timestamp format, skew, test key on mainnet
 * (by prefix, before any lookup), then the signature against the key's valid secrets. Every
 * answer without a valid signature is the same `auth.invalid_signature`, whatever the key's state;
 * only a correctly signed request learns about its key (disabled, IP, frozen, permission).
 */
export class Authenticator {
  constructor(
    private readonly deps: {
      config: Config;
      clock: Clock;
      keys: KeyRegistry;
      replay: ReplayGuard;
      buckets: TokenBuckets;
      ipBlocker: IpBlocker;
      /** Notes each key's last authenticated request (written by a job, not per request). */
      usage?: KeyUsage;
      /** The signatures' HMAC over buffers kept between requests. */
      hmac: Hmac;
    },
  ) {}

  /**
   * What is refused on the API's paths before a request's body is read: every request from a
   * blocked address (a correct one too, public ones too), and a request with a body that lacks a
   * signature header (counted as a refused authentication).
   */
  screen = (ctx: ParameterizedContext<AppState>, hasBody: boolean): void => {
    if (!ctx.path.startsWith(SIGNED_API_PREFIX)) return;
    const client = blockKey(normalizeIp(ctx.ip));
    this.refuseIfBlocked(client);
    if (!hasBody) return;
    const missing = missingOf(signatureHeaders(ctx));
    if (missing === undefined) return;
    this.deps.ipBlocker.recordFailure(client);
    throw missingHeader(missing);
  };

  /** Middleware for a route: one of `permissions`; `null` means optional (public unless signed; a signed request needs read). */
  authenticate = (permissions: Permission | readonly Permission[] | null): AppMiddleware => {
    const needed: readonly Permission[] = permissions === null ? ['read'] : typeof permissions === 'string' ? [permissions] : permissions;
    // Not async: a request whose key is cached is checked without a promise of its own.
    return (ctx, next) => {
      if (permissions === null && unsigned(signatureHeaders(ctx))) return next();
      return this.admitted(ctx, this.verify(ctx, needed), next);
    };
  };

  private admitted(ctx: AppContext, auth: AuthContext | Promise<AuthContext>, next: () => Promise<unknown>): Promise<unknown> {
    if (auth instanceof Promise) {
      return auth.then((a) => {
        ctx.state.auth = a;
        return next();
      });
    }
    ctx.state.auth = auth;
    return next();
  }

  /**
   * Middleware for a route whose permission its domain decides (payouts: a waiting withdraw request
   * answers differently from none): a validly signed request of an active key, with no permission
   * checked here.
   */
  signed = (): AppMiddleware => {
    return (ctx, next) => this.admitted(ctx, this.verify(ctx, null), next);
  };

  /**
   * A request spends one of its key's tokens once it is authenticated: validly signed, its key
   * active, sent from an allowed address (a leaked secret used from elsewhere must not drain the
   * key's budget), and not a replay. Frozen accounts and missing permissions spend one too. Its
   * signature is remembered only once it has its token.
   */
  private verify(ctx: AppContext, permission: readonly Permission[] | null): AuthContext | Promise<AuthContext> {
    // Synchronous while everything it needs is in memory (a cached key, the in-memory replay
    // guard): a signed request then costs no promise of its own; otherwise the same steps, awaited.
    const ip = normalizeIp(ctx.ip);
    try {
      const checked = this.checkSignature(ctx, ip);
      const auth =
        checked instanceof Promise ? checked.then((signed) => this.afterSignature(ctx, signed, permission)) : this.afterSignature(ctx, checked, permission);
      return auth instanceof Promise ? auth.catch((err: unknown) => this.refused(err, ip)) : auth;
    } catch (err) {
      return this.refused(err, ip);
    }
  }

  /** A refused authentication (401) counts against the client's address. */
  private refused(err: unknown, ip: string): never {
    if (err instanceof ApiError && err.status === 401) this.deps.ipBlocker.recordFailure(blockKey(ip));
    throw err;
  }

  /** A validly signed request: not a replay, then admitted. */
  private afterSignature(ctx: AppContext, signed: SignedKey, permission: readonly Permission[] | null): AuthContext | Promise<AuthContext> {
    const replayed = this.checkReplay(signed);
    return replayed instanceof Promise ? replayed.then(() => this.admit(ctx, signed, permission)) : this.admit(ctx, signed, permission);
  }

  /** A request validly signed and not a replay: its token, then its key's state. */
  private admit(ctx: AppContext, signed: SignedKey, permission: readonly Permission[] | null): AuthContext | Promise<AuthContext> {
    this.deps.ipBlocker.recordSuccess(blockKey(signed.ip));
    this.deps.usage?.touch(signed.entry.row.id, signed.nowMs);
    const take = this.takeToken(ctx, signed.entry);
    if (!take.allowed) {
      return this.forgetQuietly(signed).then(() => {
        throw keyOverLimit(take.retryAfterSeconds, 'this key is over its request limit');
      });
    }
    return this.checkKeyState(signed, permission);
  }

  /** Throws `auth.replay` for a request accepted before; a promise only when the guard answers asynchronously. */
  private checkReplay(signed: SignedKey): void | Promise<void> {
    let answer: boolean | Promise<boolean>;
    try {
      answer = this.deps.replay.seen(signed.mark, signed.entry.row.id, signed.timestampSeconds, signed.nowMs, signed.signature);
    } catch (err) {
      return replayCheckFailed(err);
    }
    if (answer instanceof Promise) return answer.then(judgeReplay, replayCheckFailed);
    judgeReplay(answer);
  }

  private takeToken(ctx: AppContext, entry: KeyEntry): TakeResult {
    const take = this.deps.buckets.take(entry.row.id, entry.row.rate_limit_per_minute);
    // Straight to Node (koa's ctx.set builds arrays per call); the values are numbers made text.
    ctx.res.setHeader('X-RateLimit-Limit', String(take.limit));
    ctx.res.setHeader('X-RateLimit-Remaining', String(take.remaining));
    return take;
  }

  /** A request refused for its key's rate leaves no trace in the replay guard: it may be sent again later. */
  private async forgetQuietly({ entry, signature, mark }: SignedKey): Promise<void> {
    try {
      await this.deps.replay.forget(mark, entry.row.id, signature);
    } catch {
      // Not forgotten: the same signature is then refused as a replay, which is safe.
    }
  }

  /** Every request from a blocked address is 429 (scope ip), a correct one too. */
  private refuseIfBlocked(ip: string): void {
    const blockedMs = this.deps.ipBlocker.blockedFor(ip);
    if (blockedMs > 0) {
      const retry = Math.ceil(blockedMs / 1000);
      throw new ApiError(
        429,
        'rate_limited',
        'too many refused authentications from this address',
        { scope: 'ip', retry_after: retry },
        { 'Retry-After': String(retry) },
      );
    }
  }

  /**
   * Headers, timestamp, test key on mainnet, signature, then the key's own state (active, IP).
   * Synchronous when the key is in the registry's cache.
   */
  private checkSignature(ctx: AppContext, ip: string): SignedKey | Promise<SignedKey> {
    const { config, clock, keys } = this.deps;
    const h = signatureHeaders(ctx);
    const missing = missingOf(h);
    if (missing !== undefined) throw missingHeader(missing);
    const keyId = h['x-api-key']!;
    const timestamp = h['x-timestamp']!;
    const nowMs = clock.now().getTime();
    const ts = checkTimestamp(timestamp, nowMs);
    if (!ts.ok && ts.code === 'auth.invalid_timestamp') throw unauthorized(ts.code, 'X-Timestamp must be whole Unix seconds');
    if (!ts.ok) throw unauthorized('auth.expired_timestamp', 'X-Timestamp is more than 300 seconds from server time', { server_time: ts.serverTime });
    if (config.network === 'mainnet' && keyId.startsWith('ck_test_')) {
      throw unauthorized('auth.test_key', 'test keys are refused on a mainnet environment', { docs_url: testKeysDocUrl(config) });
    }
    const req: SignedRequest = {
      canonical: canonicalString(timestamp, ctx.method, ctx.originalUrl, ctx.state.rawBody),
      signature: h['x-signature']!,
      timestampSeconds: ts.seconds,
      nowMs,
      ip,
    };
    // Only well-formed key ids are ever cached (or looked up).
    const cached = keys.cached(keyId);
    if (cached !== undefined) return matchKey(this.deps.hmac, cached, req);
    if (!KEY_ID.test(keyId)) return matchKey(this.deps.hmac, null, req);
    return keys.get(keyId).then((entry) => matchKey(this.deps.hmac, entry, req));
  }

  private checkKeyState({ entry, usedSecret }: SignedKey, permission: readonly Permission[] | null): AuthContext {
    if (entry.accountStatus === 'frozen') throw new ApiError(403, 'account_frozen', 'the account is frozen; support can unfreeze it');
    if (permission !== null && !permission.some((p) => entry.permissions.has(p))) {
      throw new ApiError(403, 'auth.permission_denied', `this key lacks the ${permission.join(' or ')} permission`, { required: permission[0] });
    }
    const row = entry.row;
    return { apiKeyId: row.id, keyId: row.key_id, accountId: row.account_id, permissions: entry.permissions, usedSecret, entry };
  }
}

/** The signature against the key's valid secrets, then the key's own state (active, IP). */
function matchKey(hmac: Hmac, entry: KeyEntry | null, { canonical, signature, timestampSeconds, nowMs, ip }: SignedRequest): SignedKey {
  const previousLive = entry !== null && entry.previousMac !== null && entry.previousValidUntilMs > nowMs;
  // A second HMAC only when the first does not match: every refused signature costs two, whatever
  // the key's state, and only a correct one (which learns it is correct anyway) costs one.
  const current = hmac.replayMark(entry?.mac ?? DUMMY_MAC, canonical, signature);
  const previous = current === null ? hmac.replayMark((previousLive && entry?.previousMac) || DUMMY_MAC, canonical, signature) : null;
  const mark = current ?? (previousLive ? previous : null);
  if (!entry || mark === null) throw unauthorized('auth.invalid_signature', 'the signature does not match');
  if (entry.row.status !== 'active') throw unauthorized('auth.invalid_key', `this key is ${entry.row.status}`);
  if (!entry.allowsIp(ip)) throw new ApiError(403, 'auth.ip_not_allowed', "this address is not on the key's whitelist", { ip });
  return { entry, usedSecret: current !== null ? 'current' : 'previous', signature, mark, timestampSeconds, nowMs, ip };
}

const judgeReplay = (replayed: boolean): void => {
  if (replayed) throw unauthorized('auth.replay', 'this signature was already accepted');
};

const replayCheckFailed = (err: unknown): never => {
  if (err instanceof ReplayShareFullError) throw keyOverLimit(err.retryAfterSeconds, 'this key has made too many requests in the last minutes');
  throw new ApiError(503, 'unavailable', 'the request could not be checked now; retry later');
};

/** The authenticated key of a signed route (the auth middleware ran before). */
export function authOf(ctx: AppContext): AuthContext {
  const auth = ctx.state.auth as AuthContext | undefined;
  if (!auth) throw new Error('route used without the auth middleware');
  return auth;
}
