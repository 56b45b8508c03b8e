/**
 * The withdraw permission of an API key, as a pure decision module.
 *
 * SPEC "Authentication / Permission rules for withdraw" (rules 1–9), "Rotation, disabling and
 * revocation" (rules 1–8) and PRODUCT §4–§5. No I/O, no database, no clock: the key service loads
 * the key, verifies the actor's two-factor code (TeamService.authorize / consumeOtp), passes the
 * outcome in as `Actor.otpVerified` and the time as `now`, then persists `next` and writes one
 * security-log row per entry of `events` (PRODUCT §4). Inputs are never mutated; `next` is a fresh
 * copy.
 *
 * Answers (chosen here, all SPEC codes):
 * - 400 `validation_error`, `details.field = 'otp'`: the rule asks for a two-factor code and the
 *   actor did not present a verified one (an invalid or reused code is refused earlier by the team
 *   service, with its own answer).
 * - 400 `validation_error`, `details.field = 'ip_whitelist'`: an entry is not an IP or CIDR.
 * - 403 `forbidden`, `details.required = ['owner', 'admin']`: the member's role does not allow the
 *   action, or the approver is the requester. Same answer as TeamService.authorize gives for member
 *   roles; `auth.permission_denied` is kept for what SPEC gives it: a key lacking a scope.
 * - 409 `conflict`, `details.reason = 'withdraw_requires_rotation'`: rules 8 and 9.
 * - 409 `conflict` without a reason: the state does not allow it (revoked key, no pending request,
 *   request expired, whitelist changed since the request). SPEC names no other conflict reasons, so
 *   none are invented; `message` says which, and `events` tells the service what happened.
 *
 * A refusal normally changes nothing (`next` absent). Two refusals change the key and carry `next`
 * and `events`, which the service must persist before answering the error:
 * - approving or rejecting a request older than 72 h: the request is cleared (rule 3);
 * - approving while the whitelist differs from the one at request time: the request is cancelled
 *   (rule 6). (And, defensively, a pending request that rules 8/9 have already voided.)
 *
 * Model decisions:
 * - `withdrawStatus` is authoritative. `withdrawRequest` is the pending request while `pending`, and
 *   is kept after an approval as the record of who asked (so rule 5 can take withdraw away when the
 *   requester leaves). A direct grant (rule 1), a rejection, an expiry, a cancellation or a loss
 *   clears it.
 * - "Payout key" (rule 4) = a key whose withdraw is granted or pending.
 * - A request expires when 72 h have elapsed (`now - requestedAt >= 72 h`). Every transition first
 *   applies an expiry that is due, so it reports `withdraw.request_expired` among its events.
 * - Whitelists are compared as sets (entries trimmed and lower-cased, order and duplicates ignored).
 * - Rule 7: when a Developer changes the whitelist of a key with withdraw or a pending request, the
 *   change itself files the new request (by that Developer, against the new whitelist): "a new
 *   request waits for an owner or admin". An owner or admin changing the whitelist keeps withdraw;
 *   a pending request then falls under rule 6 at approval time.
 * - Rule 4: a Developer who rotates or re-enables a payout key loses withdraw and a new request is
 *   filed in their name at once. An owner or admin who rotates or re-enables keeps withdraw.
 *   A rotation by anyone cancels a pending request filed by someone else: after it the requester
 *   no longer holds the current secret (rule 8).
 * - Only Developers ask; owners and admins grant (rule 1), so `addWithdraw` by an owner/admin
 *   grants, and by a Developer files a request (no two-factor code is needed to ask).
 * - Disabled keys can be managed (whitelist, rotation, requests); a revoked key refuses every
 *   change (409, Rotation rule 6).
 */
import { isIP } from 'node:net';
import type { Role } from '../db/entities/team';
import { ApiError } from '../shared/errors';

export interface Actor {
  memberId: string;
  role: Role;
  /** True when the actor presented a two-factor code that the team service accepted. */
  otpVerified: boolean;
}

export interface WithdrawRequest {
  requestedBy: string;
  requestedAt: Date;
  ipWhitelistAtRequest: string[];
}

export interface KeyState {
  /** Includes 'withdraw' when granted. */
  permissions: string[];
  withdrawStatus: 'none' | 'pending' | 'granted';
  /** Member id of the grantor (rule 1) or approver (rule 2). */
  withdrawGrantedBy: string | null;
  /** The pending request; after an approval, the record of the approved request. */
  withdrawRequest: WithdrawRequest | null;
  ipWhitelist: string[];
  /** Member id holding the current secret. */
  secretHolder: string;
  secretGeneration: number;
  rotationRequired: boolean;
  previousSecret: { holder: string; validUntil: Date } | null;
  status: 'active' | 'disabled' | 'revoked';
}

export const WITHDRAW = 'withdraw';
/** SPEC rule 3: a request expires after 72 hours. */
export const REQUEST_TTL_MS = 72 * 60 * 60 * 1000;
/** SPEC Rotation rule 1: the previous secret keeps working for 10 minutes. */
export const PREVIOUS_SECRET_GRACE_MS = 10 * 60 * 1000;
export const WITHDRAW_REQUIRES_ROTATION = 'withdraw_requires_rotation';
export const PREVIOUS_SECRET = 'previous_secret';

/** Security-log entries (PRODUCT §4), in the order they happened. */
export type KeyEvent =
  | 'withdraw.granted' // rule 1: an owner or admin added withdraw
  | 'withdraw.requested' // rule 2: a Developer's request was filed
  | 'withdraw.approved' // rule 2
  | 'withdraw.rejected' // rule 3
  | 'withdraw.request_expired' // rule 3
  | 'withdraw.request_cancelled' // rules 5, 6, 7, 8, 9, 4
  | 'withdraw.lost' // the key lost a granted withdraw (rules 4, 5, 7, 9)
  | 'key.whitelist_changed'
  | 'key.rotated'
  | 'key.disabled'
  | 'key.enabled'
  | 'key.revoked'
  | 'key.rotation_required'
  | 'key.previous_secret_ended'; // Rotation rule 4

export type ErrorDetails = Record<string, unknown>;

export interface Transition {
  ok: true;
  next: KeyState;
  /** Empty when nothing changed (`next` then equals the input). */
  events: KeyEvent[];
}

export interface Refusal {
  ok: false;
  status: number;
  code: string;
  /** For humans (the envelope's `message`). */
  message: string;
  /** `details.reason`, when SPEC names one. */
  reason?: string;
  /** The envelope's `details` (includes `reason`, `field` or `required` when given). */
  details: ErrorDetails;
  /** Present when the refusal itself changed the key (rules 3 and 6): persist it, then answer. */
  next?: KeyState;
  events: KeyEvent[];
}

export type Decision = Transition | Refusal;

export type PayoutDecision = { allowed: true } | { allowed: false; status: number; code: string; message: string; reason?: string; details: ErrorDetails };

/** The API error of a refusal, for the key service to throw. */
export const refusalToApiError = (r: Refusal | Extract<PayoutDecision, { allowed: false }>): ApiError => new ApiError(r.status, r.code, r.message, r.details);

// ---------------------------------------------------------------------------------------------
// Helpers

const MANAGERS: readonly Role[] = ['owner', 'admin'];
const isManager = (role: Role | null): boolean => role !== null && MANAGERS.includes(role);

const clone = (k: KeyState): KeyState => ({
  ...k,
  permissions: [...k.permissions],
  ipWhitelist: [...k.ipWhitelist],
  withdrawRequest: k.withdrawRequest
    ? {
        requestedBy: k.withdrawRequest.requestedBy,
        requestedAt: new Date(k.withdrawRequest.requestedAt.getTime()),
        ipWhitelistAtRequest: [...k.withdrawRequest.ipWhitelistAtRequest],
      }
    : null,
  previousSecret: k.previousSecret ? { holder: k.previousSecret.holder, validUntil: new Date(k.previousSecret.validUntil.getTime()) } : null,
});

const refuse = (status: number, code: string, message: string, details: ErrorDetails = {}, change?: { next: KeyState; events: KeyEvent[] }): Refusal => {
  const r: Refusal = { ok: false, status, code, message, details, events: change ? change.events : [] };
  if (typeof details.reason === 'string') r.reason = details.reason;
  if (change) r.next = change.next;
  return r;
};

const revokedKey = (): Refusal => refuse(409, 'conflict', 'the key is revoked; revocation is final');
const needsManager = (what: string): Refusal => refuse(403, 'forbidden', `${what} needs the role owner or admin`, { required: [...MANAGERS] });
const needsOtp = (): Refusal => refuse(400, 'validation_error', 'a two-factor code is required (--otp)', { field: 'otp' });
const requiresRotation = (message: string, change?: { next: KeyState; events: KeyEvent[] }): Refusal =>
  refuse(409, 'conflict', message, { reason: WITHDRAW_REQUIRES_ROTATION }, change);

const withoutWithdraw = (perms: string[]): string[] => perms.filter((p) => p !== WITHDRAW);
const withWithdraw = (perms: string[]): string[] => (perms.includes(WITHDRAW) ? [...perms] : [...perms, WITHDRAW]);

/** Takes withdraw away (granted → lost, pending → cancelled). Mutates the working copy `k`. */
function dropWithdraw(k: KeyState, events: KeyEvent[]): void {
  if (k.withdrawStatus === 'granted') events.push('withdraw.lost');
  else if (k.withdrawStatus === 'pending') events.push('withdraw.request_cancelled');
  k.permissions = withoutWithdraw(k.permissions);
  k.withdrawStatus = 'none';
  k.withdrawGrantedBy = null;
  k.withdrawRequest = null;
}

/** Files a Developer's request against the key's current whitelist. Mutates `k`. */
function fileRequest(k: KeyState, requester: string, now: Date, events: KeyEvent[]): void {
  k.permissions = withoutWithdraw(k.permissions);
  k.withdrawStatus = 'pending';
  k.withdrawGrantedBy = null;
  k.withdrawRequest = { requestedBy: requester, requestedAt: new Date(now.getTime()), ipWhitelistAtRequest: [...k.ipWhitelist] };
  events.push('withdraw.requested');
}

const requestExpired = (k: KeyState, now: Date): boolean =>
  k.withdrawStatus === 'pending' && k.withdrawRequest !== null && now.getTime() - k.withdrawRequest.requestedAt.getTime() >= REQUEST_TTL_MS;

/** A working copy with a due expiry applied (rule 3). */
function start(key: KeyState, now: Date): { k: KeyState; events: KeyEvent[] } {
  const k = clone(key);
  const events: KeyEvent[] = [];
  if (requestExpired(k, now)) {
    k.withdrawStatus = 'none';
    k.withdrawRequest = null;
    k.withdrawGrantedBy = null;
    k.permissions = withoutWithdraw(k.permissions);
    events.push('withdraw.request_expired');
  }
  return { k, events };
}

const isPayoutKey = (k: KeyState): boolean => k.withdrawStatus === 'granted' || k.withdrawStatus === 'pending';

/** Entry form used for comparison: trimmed, lower-case (IPv6 hex). */
const normalizeEntry = (e: string): string => e.trim().toLowerCase();

/** The whitelist as a sorted set of normalized entries. */
export const normalizeWhitelist = (list: readonly string[]): string[] => [...new Set(list.map(normalizeEntry))].sort();

/** Rule 6: order and duplicates do not count as a difference. */
export const sameWhitelist = (a: readonly string[], b: readonly string[]): boolean => {
  const x = normalizeWhitelist(a);
  const y = normalizeWhitelist(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

/** An IP address or CIDR block (IPv4 /0–32, IPv6 /0–128). */
export const isWhitelistEntry = (entry: string): boolean => {
  const e = entry.trim();
  const slash = e.indexOf('/');
  if (slash < 0) return isIP(e) !== 0;
  const ip = e.slice(0, slash);
  const bits = e.slice(slash + 1);
  const family = isIP(ip);
  if (family === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
};

// ---------------------------------------------------------------------------------------------
// Transitions

/**
 * Adds withdraw. Owner/admin with a two-factor code: granted at once, by them (rule 1). Developer:
 * files a request (rule 2) if they hold the current secret (rule 8); no code needed to ask.
 * Nobody on a key with rotation_required (rule 9). Already granted, or a request already waiting:
 * nothing changes.
 */
export function addWithdraw(key: KeyState, actor: Actor, now: Date): Decision {
  if (key.status === 'revoked') return revokedKey();
  if (key.rotationRequired) {
    return requiresRotation('the key must be rotated before withdraw can be added or asked for');
  }
  if (!isManager(actor.role) && actor.memberId !== key.secretHolder) {
    return requiresRotation('only the holder of the current secret can ask for withdraw; rotate the key first');
  }
  if (isManager(actor.role) && !actor.otpVerified) return needsOtp();
  const { k, events } = start(key, now);
  if (k.withdrawStatus === 'granted') return { ok: true, next: k, events };
  if (isManager(actor.role)) {
    if (k.withdrawStatus === 'pending') events.push('withdraw.request_cancelled');
    k.permissions = withWithdraw(k.permissions);
    k.withdrawStatus = 'granted';
    k.withdrawGrantedBy = actor.memberId;
    k.withdrawRequest = null;
    events.push('withdraw.granted');
    return { ok: true, next: k, events };
  }
  if (k.withdrawStatus === 'pending') return { ok: true, next: k, events };
  fileRequest(k, actor.memberId, now, events);
  return { ok: true, next: k, events };
}

/**
 * Sets the key's permissions as asked. Withdraw among them, on a key without it, is added as
 * `addWithdraw` decides (granted, or asked for, or 409 withdraw_requires_rotation); withdraw left
 * out takes it away (a granted withdraw is lost, a pending request cancelled). Asking again for a
 * withdraw the key has or waits for changes nothing of it.
 */
export function setPermissions(key: KeyState, actor: Actor, asked: readonly string[], now: Date): Decision {
  const others = withoutWithdraw([...asked]);
  const withOthers: KeyState = { ...clone(key), permissions: key.permissions.includes(WITHDRAW) ? [...others, WITHDRAW] : others };
  const wants = asked.includes(WITHDRAW);
  if (wants && key.withdrawStatus === 'none') return addWithdraw(withOthers, actor, now);
  const { k, events } = start(withOthers, now);
  if (!wants) dropWithdraw(k, events);
  return { ok: true, next: k, events };
}

/** Shared checks of approve and reject: who may decide, and whether a live request exists. */
function decideRequest(key: KeyState, approver: Actor, now: Date, verb: string): Refusal | { k: KeyState; events: KeyEvent[] } {
  if (key.status === 'revoked') return revokedKey();
  if (!isManager(approver.role)) return needsManager(`to ${verb} a withdraw request`);
  if (key.withdrawStatus !== 'pending' || key.withdrawRequest === null) {
    return refuse(409, 'conflict', 'the key has no pending withdraw request');
  }
  if (key.withdrawRequest.requestedBy === approver.memberId) {
    return refuse(403, 'forbidden', `the requester cannot ${verb} their own withdraw request`, { required: [...MANAGERS] });
  }
  if (!approver.otpVerified) return needsOtp();
  const { k, events } = start(key, now);
  if (events.length > 0) {
    return refuse(409, 'conflict', 'the withdraw request expired (72 hours)', {}, { next: k, events });
  }
  return { k, events };
}

/**
 * Approves a Developer's request: an owner or admin other than the requester, with a two-factor
 * code (rule 2). Expired (rule 3): refused, request cleared. Whitelist changed since the request
 * (rule 6): refused, request cancelled. Defensive: a request whose requester no longer holds the
 * current secret, or on a key with rotation_required, is refused (409 withdraw_requires_rotation)
 * and cancelled (rules 8, 9).
 */
export function approveRequest(key: KeyState, approver: Actor, now: Date): Decision {
  const d = decideRequest(key, approver, now, 'approve');
  if ('ok' in d) return d;
  const { k, events } = d;
  const req = k.withdrawRequest as WithdrawRequest;
  if (k.rotationRequired || req.requestedBy !== k.secretHolder) {
    dropWithdraw(k, events);
    return requiresRotation('the request no longer matches the holder of the current secret; it is cancelled', { next: k, events });
  }
  if (!sameWhitelist(req.ipWhitelistAtRequest, k.ipWhitelist)) {
    dropWithdraw(k, events);
    return refuse(409, 'conflict', 'the IP whitelist changed since the request was filed; the request is cancelled', {}, { next: k, events });
  }
  k.permissions = withWithdraw(k.permissions);
  k.withdrawStatus = 'granted';
  k.withdrawGrantedBy = approver.memberId;
  events.push('withdraw.approved');
  return { ok: true, next: k, events };
}

/**
 * Rejects a request: an owner or admin other than the requester, with a two-factor code. The key
 * keeps working without withdraw (rule 3). Expired: refused, request cleared.
 */
export function rejectRequest(key: KeyState, approver: Actor, now: Date): Decision {
  const d = decideRequest(key, approver, now, 'reject');
  if ('ok' in d) return d;
  const { k, events } = d;
  k.permissions = withoutWithdraw(k.permissions);
  k.withdrawStatus = 'none';
  k.withdrawGrantedBy = null;
  k.withdrawRequest = null;
  events.push('withdraw.rejected');
  return { ok: true, next: k, events };
}

/** Clears a request that is 72 hours old (rule 3). For the periodic job; always succeeds. */
export function expireRequests(key: KeyState, now: Date): Transition {
  const { k, events } = start(key, now);
  return { ok: true, next: k, events };
}

/**
 * Replaces the IP whitelist. A Developer changing the whitelist of a key with withdraw or a pending
 * request (rule 7): must hold the current secret (rule 8, else 409 and nothing changes), confirms
 * with a two-factor code, the key loses withdraw (or the request is cancelled) and a new request
 * is filed in their name against the new whitelist. Owners and admins, and changes to keys without
 * withdraw, just change the list. The same set of entries is no change.
 */
export function changeWhitelist(key: KeyState, actor: Actor, newList: readonly string[], now: Date): Decision {
  if (key.status === 'revoked') return revokedKey();
  const bad = newList.find((e) => typeof e !== 'string' || !isWhitelistEntry(e));
  if (bad !== undefined) {
    return refuse(400, 'validation_error', `not an IP address or CIDR block: ${String(bad)}`, { field: 'ip_whitelist' });
  }
  const list = [...new Set(newList.map((e) => e.trim()))];
  const { k, events } = start(key, now);
  if (sameWhitelist(k.ipWhitelist, list)) return { ok: true, next: k, events };
  const asks = actor.role === 'developer' && isPayoutKey(k);
  if (asks) {
    if (actor.memberId !== k.secretHolder) {
      return requiresRotation('only the holder of the current secret can change the whitelist of a payout key; rotate the key first');
    }
    if (!actor.otpVerified) return needsOtp();
  }
  k.ipWhitelist = list;
  events.push('key.whitelist_changed');
  if (asks) {
    dropWithdraw(k, events);
    fileRequest(k, actor.memberId, now, events);
  }
  return { ok: true, next: k, events };
}

/**
 * Rotates the secret (Rotation rule 1): new generation, held by the actor; the old secret stays
 * valid for 10 minutes as the previous secret (a second rotation in the window drops the oldest);
 * rotation_required is cleared. A Developer rotating a payout key asks again (rule 4): withdraw is
 * lost and a new request filed in their name. An owner or admin keeps a granted withdraw. A
 * pending request by someone other than the actor is cancelled (rule 8).
 *
 * `oldHolderActive`: false when the holder of the secret being replaced is no longer a member in
 * the same role (for example the rotation that rotation_required asked for after they left); the
 * old secret then gets no grace (Rotation rule 4).
 */
export function rotate(key: KeyState, actor: Actor, now: Date, oldHolderActive = true): Decision {
  if (key.status === 'revoked') return revokedKey();
  const { k, events } = start(key, now);
  const oldHolder = k.secretHolder;
  k.secretGeneration = key.secretGeneration + 1;
  k.secretHolder = actor.memberId;
  k.previousSecret = oldHolderActive ? { holder: oldHolder, validUntil: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS) } : null;
  k.rotationRequired = false;
  events.push('key.rotated');
  if (actor.role === 'developer' && isPayoutKey(k)) {
    dropWithdraw(k, events);
    fileRequest(k, actor.memberId, now, events);
  } else if (k.withdrawStatus === 'pending' && k.withdrawRequest?.requestedBy !== actor.memberId) {
    dropWithdraw(k, events);
  }
  return { ok: true, next: k, events };
}

/** Disables the key (Rotation rule 5). Withdraw is untouched; re-enabling decides (rule 4). */
export function disable(key: KeyState, _actor: Actor, now: Date): Decision {
  if (key.status === 'revoked') return revokedKey();
  const { k, events } = start(key, now);
  if (k.status === 'disabled') return { ok: true, next: k, events };
  k.status = 'disabled';
  events.push('key.disabled');
  return { ok: true, next: k, events };
}

/**
 * Re-enables a disabled key. A Developer re-enabling a payout key asks again (rule 4): they must
 * hold the current secret (rule 8, else 409 and the key stays disabled), the key loses withdraw and
 * a new request is filed in their name. An owner or admin keeps withdraw. Revoked: 409 (rule 6).
 * Already active: nothing changes.
 */
export function reenable(key: KeyState, actor: Actor, now: Date): Decision {
  if (key.status === 'revoked') return revokedKey();
  const { k, events } = start(key, now);
  if (k.status === 'active') return { ok: true, next: k, events };
  const asks = actor.role === 'developer' && isPayoutKey(k);
  if (asks && actor.memberId !== k.secretHolder) {
    return requiresRotation('only the holder of the current secret can re-enable a payout key; rotate the key first');
  }
  k.status = 'active';
  events.push('key.enabled');
  if (asks) {
    dropWithdraw(k, events);
    fileRequest(k, actor.memberId, now, events);
  }
  return { ok: true, next: k, events };
}

/** Revokes the key, for good (Rotation rule 6). Revoking a revoked key changes nothing. */
export function revoke(key: KeyState, _actor: Actor, now: Date): Decision {
  if (key.status === 'revoked') return { ok: true, next: clone(key), events: [] };
  const { k, events } = start(key, now);
  k.status = 'revoked';
  events.push('key.revoked');
  return { ok: true, next: k, events };
}

/**
 * A member left the team or changed role. Rule 5: if they asked for or approved/granted the key's
 * withdraw, the key loses it (or the request is cancelled). PRODUCT §5: if they hold the current
 * secret, rotation_required becomes true, and with it withdraw and any request are lost (rule 9).
 * Rotation rule 4: if they hold the previous secret, it ends now. A revoked key is left as it is.
 */
export function memberLeftOrChangedRole(key: KeyState, memberId: string, now: Date): Transition {
  if (key.status === 'revoked') return { ok: true, next: clone(key), events: [] };
  const { k, events } = start(key, now);
  if (isPayoutKey(k) && (k.withdrawGrantedBy === memberId || k.withdrawRequest?.requestedBy === memberId)) {
    dropWithdraw(k, events);
  }
  if (k.secretHolder === memberId && !k.rotationRequired) {
    k.rotationRequired = true;
    events.push('key.rotation_required');
    dropWithdraw(k, events);
  }
  if (k.previousSecret !== null && k.previousSecret.holder === memberId) {
    k.previousSecret = null;
    events.push('key.previous_secret_ended');
  }
  return { ok: true, next: k, events };
}

/**
 * An owner or admin sets rotation_required (PRODUCT §5, `coinkeep keys require-rotation`; SPEC asks
 * for no two-factor code). The key loses withdraw and any pending request (rule 9); its other
 * permissions keep working. Already set: nothing changes.
 */
export function requireRotation(key: KeyState, actor: Actor): Decision {
  if (key.status === 'revoked') return revokedKey();
  if (!isManager(actor.role)) return needsManager('requiring a rotation');
  const k = clone(key);
  const events: KeyEvent[] = [];
  if (!k.rotationRequired) {
    k.rotationRequired = true;
    events.push('key.rotation_required');
  }
  dropWithdraw(k, events);
  return { ok: true, next: k, events };
}

// ---------------------------------------------------------------------------------------------
// Request time

/**
 * May a payout (POST /v1/withdrawals) signed with this key go ahead? Called after the signature is
 * verified with `usedSecret`. `previousHolderRole` is the current role of `previousSecret.holder`,
 * or null when they are no longer a member (or there is no previous secret).
 *
 * - disabled or revoked: 401 `auth.invalid_key` (Rotation rule 5);
 * - previous secret out of its window, or its holder gone: 401 `auth.invalid_signature` (rules 1, 4);
 * - request waiting (not expired): 403 `withdraw_pending_approval` (rule 2);
 * - no withdraw (none, rejected, expired, lost, rotation_required): 403 `auth.permission_denied`,
 *   `details.required = 'withdraw'` (rules 3, 9);
 * - previous secret: 403 `auth.permission_denied`, `details.reason = 'previous_secret'` (Rotation
 *   rule 2), except Rotation rule 3: the previous secret's holder rotated the key themselves (they
 *   hold the current secret too), granted its withdraw themselves, and is an owner or admin.
 */
export function payoutDecision(key: KeyState, usedSecret: 'current' | 'previous', now: Date, previousHolderRole: Role | null): PayoutDecision {
  const deny = (status: number, code: string, message: string, details: ErrorDetails = {}): PayoutDecision => {
    const d: PayoutDecision = { allowed: false, status, code, message, details };
    if (typeof details.reason === 'string') d.reason = details.reason;
    return d;
  };
  if (key.status !== 'active') return deny(401, 'auth.invalid_key', `the key is ${key.status}`);
  const prev = key.previousSecret;
  if (usedSecret === 'previous') {
    if (prev === null || now.getTime() >= prev.validUntil.getTime() || previousHolderRole === null) {
      return deny(401, 'auth.invalid_signature', 'the signature is not valid');
    }
  }
  if (key.withdrawStatus === 'pending' && !key.rotationRequired && !requestExpired(key, now)) {
    return deny(403, 'withdraw_pending_approval', 'the withdraw permission of this key waits for approval');
  }
  if (key.withdrawStatus !== 'granted' || key.rotationRequired || !key.permissions.includes(WITHDRAW)) {
    return deny(403, 'auth.permission_denied', 'the key lacks the withdraw permission', { required: WITHDRAW });
  }
  if (usedSecret === 'previous') {
    const exception = prev !== null && isManager(previousHolderRole) && prev.holder === key.withdrawGrantedBy && prev.holder === key.secretHolder;
    if (!exception) {
      return deny(403, 'auth.permission_denied', 'payouts need the current secret', { required: WITHDRAW, reason: PREVIOUS_SECRET });
    }
  }
  return { allowed: true };
}
