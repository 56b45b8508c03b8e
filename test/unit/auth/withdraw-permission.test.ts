import test, { type ExecutionContext } from 'ava';
import {
  type Actor,
  type Decision,
  type KeyState,
  type Refusal,
  type Transition,
  addWithdraw,
  approveRequest,
  changeWhitelist,
  disable,
  expireRequests,
  memberLeftOrChangedRole,
  payoutDecision,
  PREVIOUS_SECRET_GRACE_MS,
  reenable,
  refusalToApiError,
  rejectRequest,
  REQUEST_TTL_MS,
  requireRotation,
  revoke,
  rotate,
  setPermissions,
} from '../../../src/auth/withdraw-permission';
import { ApiError } from '../../../src/shared/errors';

// ---------------------------------------------------------------------------------------------
// Fixtures

const OWNER = 'm-owner';
const ADMIN = 'm-admin';
const DEV = 'm-dev';
const DEV2 = 'm-dev2';

const owner: Actor = { memberId: OWNER, role: 'owner', otpVerified: true };
const admin: Actor = { memberId: ADMIN, role: 'admin', otpVerified: true };
const dev: Actor = { memberId: DEV, role: 'developer', otpVerified: false };
const devOtp: Actor = { memberId: DEV, role: 'developer', otpVerified: true };
const dev2: Actor = { memberId: DEV2, role: 'developer', otpVerified: true };
const noOtp = (a: Actor): Actor => ({ ...a, otpVerified: false });

const T0 = new Date('2026-03-01T12:00:00.000Z');
const HOUR = 60 * 60 * 1000;
const at = (ms: number): Date => new Date(T0.getTime() + ms);

const WL = ['203.0.113.0/24', '198.51.100.7'];
const OTHER_PERMS = ['read', 'create_invoice', 'create_address'];

/** A key held by DEV, without withdraw. */
const baseKey = (over: Partial<KeyState> = {}): KeyState => ({
  permissions: [...OTHER_PERMS],
  withdrawStatus: 'none',
  withdrawGrantedBy: null,
  withdrawRequest: null,
  ipWhitelist: [...WL],
  secretHolder: DEV,
  secretGeneration: 1,
  rotationRequired: false,
  previousSecret: null,
  status: 'active',
  ...over,
});

/** DEV asked at T0. */
const pendingKey = (over: Partial<KeyState> = {}): KeyState =>
  baseKey({
    withdrawStatus: 'pending',
    withdrawRequest: { requestedBy: DEV, requestedAt: T0, ipWhitelistAtRequest: [...WL] },
    ...over,
  });

/** DEV asked at T0, ADMIN approved. */
const approvedKey = (over: Partial<KeyState> = {}): KeyState =>
  baseKey({
    permissions: [...OTHER_PERMS, 'withdraw'],
    withdrawStatus: 'granted',
    withdrawGrantedBy: ADMIN,
    withdrawRequest: { requestedBy: DEV, requestedAt: T0, ipWhitelistAtRequest: [...WL] },
    ...over,
  });

/** OWNER holds the secret and granted withdraw directly. */
const ownerKey = (over: Partial<KeyState> = {}): KeyState =>
  baseKey({
    permissions: [...OTHER_PERMS, 'withdraw'],
    withdrawStatus: 'granted',
    withdrawGrantedBy: OWNER,
    secretHolder: OWNER,
    ...over,
  });

function ok(t: ExecutionContext, d: Decision): Transition {
  if (!d.ok) {
    t.fail(`refused: ${d.status} ${d.code} ${d.message}`);
    throw new Error('unreachable');
  }
  return d;
}

function refused(t: ExecutionContext, d: Decision, status: number, code: string, reason?: string): Refusal {
  if (d.ok) {
    t.fail(`allowed: ${d.events.join(', ')}`);
    throw new Error('unreachable');
  }
  t.is(d.status, status);
  t.is(d.code, code);
  t.is(d.reason, reason);
  t.is(d.details.reason, reason);
  return d;
}

/** A refusal that changes nothing. */
function refusedUnchanged(t: ExecutionContext, d: Decision, status: number, code: string, reason?: string): Refusal {
  const r = refused(t, d, status, code, reason);
  t.is(r.next, undefined);
  t.deepEqual(r.events, []);
  return r;
}

const hasWithdraw = (k: KeyState): boolean => k.permissions.includes('withdraw');

function payoutAllowed(t: ExecutionContext, k: KeyState, now = T0): void {
  t.deepEqual(payoutDecision(k, 'current', now, null), { allowed: true });
}

function payoutRefused(
  t: ExecutionContext,
  k: KeyState,
  status: number,
  code: string,
  opts: { used?: 'current' | 'previous'; now?: Date; prevRole?: 'owner' | 'admin' | 'developer' | null; reason?: string } = {},
): void {
  const d = payoutDecision(k, opts.used ?? 'current', opts.now ?? T0, opts.prevRole ?? null);
  if (d.allowed) {
    t.fail('payout allowed');
    return;
  }
  t.is(d.status, status);
  t.is(d.code, code);
  t.is(d.reason, opts.reason);
}

// ---------------------------------------------------------------------------------------------
// Permission rules for withdraw, rule 1

test('rule 1: withdraw is granted by an owner or admin with their own two-factor code', (t) => {
  for (const grantor of [owner, admin]) {
    const r = ok(t, addWithdraw(baseKey(), grantor, T0));
    t.true(hasWithdraw(r.next));
    t.is(r.next.withdrawStatus, 'granted');
    t.is(r.next.withdrawGrantedBy, grantor.memberId);
    t.is(r.next.withdrawRequest, null);
    t.deepEqual(r.events, ['withdraw.granted']);
    payoutAllowed(t, r.next);
  }
});

test('rule 1: an owner or admin without a two-factor code cannot grant withdraw', (t) => {
  for (const grantor of [owner, admin]) {
    const r = refusedUnchanged(t, addWithdraw(baseKey(), noOtp(grantor), T0), 400, 'validation_error');
    t.is(r.details.field, 'otp');
    const err = refusalToApiError(r);
    t.true(err instanceof ApiError);
    t.deepEqual(err.toBody().error.details, { field: 'otp' });
  }
});

test('rule 1: an owner granting withdraw on a key with a waiting request grants it at once', (t) => {
  const r = ok(t, addWithdraw(pendingKey(), owner, at(HOUR)));
  t.is(r.next.withdrawStatus, 'granted');
  t.is(r.next.withdrawGrantedBy, OWNER);
  t.is(r.next.withdrawRequest, null);
  t.deepEqual(r.events, ['withdraw.request_cancelled', 'withdraw.granted']);
});

test('rule 1: adding withdraw to a key that already has it changes nothing', (t) => {
  const key = approvedKey();
  const r = ok(t, addWithdraw(key, owner, T0));
  t.deepEqual(r.next, key);
  t.deepEqual(r.events, []);
});

// ---------------------------------------------------------------------------------------------
// Rule 2

test('rule 2: a Developer-role member only requests withdraw, and the key works at once for its other permissions', (t) => {
  const r = ok(t, addWithdraw(baseKey(), dev, T0));
  t.is(r.next.withdrawStatus, 'pending');
  t.false(hasWithdraw(r.next));
  t.deepEqual(r.next.permissions, OTHER_PERMS);
  t.is(r.next.withdrawGrantedBy, null);
  t.deepEqual(r.next.withdrawRequest, { requestedBy: DEV, requestedAt: T0, ipWhitelistAtRequest: WL });
  t.deepEqual(r.events, ['withdraw.requested']);
  // Asking again while the request waits changes nothing.
  const again = ok(t, addWithdraw(r.next, dev, at(HOUR)));
  t.deepEqual(again.next, r.next);
  t.deepEqual(again.events, []);
});

test('rule 2: payouts answer 403 withdraw_pending_approval until an owner or admin other than the requester approves', (t) => {
  payoutRefused(t, pendingKey(), 403, 'withdraw_pending_approval', { now: at(HOUR) });
  for (const approver of [owner, admin]) {
    const r = ok(t, approveRequest(pendingKey(), approver, at(HOUR)));
    t.is(r.next.withdrawStatus, 'granted');
    t.true(hasWithdraw(r.next));
    t.is(r.next.withdrawGrantedBy, approver.memberId);
    t.is(r.next.withdrawRequest?.requestedBy, DEV, 'the request stays as the record of who asked');
    t.deepEqual(r.events, ['withdraw.approved']);
    payoutAllowed(t, r.next, at(HOUR));
  }
});

test('rule 2: a Developer cannot approve a withdraw request', (t) => {
  const r = refusedUnchanged(t, approveRequest(pendingKey(), dev2, at(HOUR)), 403, 'forbidden');
  t.deepEqual(r.details.required, ['owner', 'admin']);
});

test('rule 2: the requester cannot approve their own request', (t) => {
  const key = pendingKey({
    secretHolder: ADMIN,
    withdrawRequest: { requestedBy: ADMIN, requestedAt: T0, ipWhitelistAtRequest: [...WL] },
  });
  refusedUnchanged(t, approveRequest(key, admin, at(HOUR)), 403, 'forbidden');
  refusedUnchanged(t, rejectRequest(key, admin, at(HOUR)), 403, 'forbidden');
  ok(t, approveRequest(key, owner, at(HOUR)));
});

test('rule 2: the approval needs a two-factor code', (t) => {
  const r = refusedUnchanged(t, approveRequest(pendingKey(), noOtp(owner), at(HOUR)), 400, 'validation_error');
  t.is(r.details.field, 'otp');
  refusedUnchanged(t, rejectRequest(pendingKey(), noOtp(admin), at(HOUR)), 400, 'validation_error');
});

test('rule 2: there is nothing to approve on a key without a waiting request', (t) => {
  refusedUnchanged(t, approveRequest(baseKey(), owner, T0), 409, 'conflict');
  refusedUnchanged(t, approveRequest(approvedKey(), owner, T0), 409, 'conflict');
  refusedUnchanged(t, rejectRequest(baseKey(), owner, T0), 409, 'conflict');
});

// ---------------------------------------------------------------------------------------------
// Rule 3

test('rule 3: a rejected request leaves the key working without withdraw', (t) => {
  const r = ok(t, rejectRequest(pendingKey(), admin, at(HOUR)));
  t.is(r.next.withdrawStatus, 'none');
  t.is(r.next.withdrawRequest, null);
  t.deepEqual(r.next.permissions, OTHER_PERMS);
  t.is(r.next.status, 'active');
  t.deepEqual(r.events, ['withdraw.rejected']);
  payoutRefused(t, r.next, 403, 'auth.permission_denied');
  const d = payoutDecision(r.next, 'current', at(HOUR), null);
  t.false(d.allowed);
  if (!d.allowed) t.is(d.details.required, 'withdraw');
  // A Developer cannot reject.
  refusedUnchanged(t, rejectRequest(pendingKey(), dev2, at(HOUR)), 403, 'forbidden');
});

test('rule 3: a request expires after 72 hours', (t) => {
  const before = expireRequests(pendingKey(), at(REQUEST_TTL_MS - 1));
  t.deepEqual(before.next, pendingKey());
  t.deepEqual(before.events, []);
  payoutRefused(t, pendingKey(), 403, 'withdraw_pending_approval', { now: at(REQUEST_TTL_MS - 1) });

  const after = expireRequests(pendingKey(), at(REQUEST_TTL_MS));
  t.is(after.next.withdrawStatus, 'none');
  t.is(after.next.withdrawRequest, null);
  t.deepEqual(after.next.permissions, OTHER_PERMS);
  t.deepEqual(after.events, ['withdraw.request_expired']);
  // A granted key is not touched by expiry.
  t.deepEqual(expireRequests(approvedKey(), at(10 * REQUEST_TTL_MS)).events, []);
});

test('rule 3: an expired request leaves the key working without withdraw', (t) => {
  // Even before the job clears it, a payout is plainly refused, not "pending".
  payoutRefused(t, pendingKey(), 403, 'auth.permission_denied', { now: at(REQUEST_TTL_MS) });
  // The developer may ask again.
  const r = ok(t, addWithdraw(pendingKey(), dev, at(REQUEST_TTL_MS + HOUR)));
  t.deepEqual(r.events, ['withdraw.request_expired', 'withdraw.requested']);
  t.deepEqual(r.next.withdrawRequest?.requestedAt, at(REQUEST_TTL_MS + HOUR));
});

test('rule 3: an expired request is refused on approval or rejection and cleared', (t) => {
  for (const decide of [approveRequest, rejectRequest]) {
    const r = refused(t, decide(pendingKey(), owner, at(REQUEST_TTL_MS)), 409, 'conflict');
    t.truthy(r.next);
    t.is(r.next?.withdrawStatus, 'none');
    t.is(r.next?.withdrawRequest, null);
    t.false(hasWithdraw(r.next as KeyState));
    t.deepEqual(r.events, ['withdraw.request_expired']);
  }
});

// ---------------------------------------------------------------------------------------------
// Rule 4

test('rule 4: a Developer who rotates a payout key asks again', (t) => {
  const now = at(5 * HOUR);
  const r = ok(t, rotate(approvedKey(), dev, now));
  t.is(r.next.secretGeneration, 2);
  t.is(r.next.withdrawStatus, 'pending');
  t.false(hasWithdraw(r.next));
  t.is(r.next.withdrawGrantedBy, null);
  t.deepEqual(r.next.withdrawRequest, { requestedBy: DEV, requestedAt: now, ipWhitelistAtRequest: WL });
  t.deepEqual(r.events, ['key.rotated', 'withdraw.lost', 'withdraw.requested']);
  payoutRefused(t, r.next, 403, 'withdraw_pending_approval', { now });
  // A waiting request is filed anew too.
  const p = ok(t, rotate(pendingKey(), dev, now));
  t.deepEqual(p.events, ['key.rotated', 'withdraw.request_cancelled', 'withdraw.requested']);
  t.deepEqual(p.next.withdrawRequest?.requestedAt, now);
});

test('rule 4: a Developer who re-enables a payout key asks again', (t) => {
  const now = at(HOUR);
  const r = ok(t, reenable(approvedKey({ status: 'disabled' }), dev, now));
  t.is(r.next.status, 'active');
  t.is(r.next.withdrawStatus, 'pending');
  t.false(hasWithdraw(r.next));
  t.deepEqual(r.next.withdrawRequest, { requestedBy: DEV, requestedAt: now, ipWhitelistAtRequest: WL });
  t.deepEqual(r.events, ['key.enabled', 'withdraw.lost', 'withdraw.requested']);
});

test('rule 4: an owner or admin who rotates or re-enables a payout key keeps withdraw', (t) => {
  const rot = ok(t, rotate(approvedKey(), admin, at(HOUR)));
  t.is(rot.next.withdrawStatus, 'granted');
  t.true(hasWithdraw(rot.next));
  t.is(rot.next.withdrawGrantedBy, ADMIN);
  t.deepEqual(rot.events, ['key.rotated']);
  payoutAllowed(t, rot.next, at(HOUR));

  const en = ok(t, reenable(approvedKey({ status: 'disabled' }), owner, at(HOUR)));
  t.is(en.next.status, 'active');
  t.is(en.next.withdrawStatus, 'granted');
  t.deepEqual(en.events, ['key.enabled']);
});

test('rule 4: a Developer who rotates or re-enables a key without withdraw files no request', (t) => {
  const rot = ok(t, rotate(baseKey(), dev, T0));
  t.is(rot.next.withdrawStatus, 'none');
  t.deepEqual(rot.events, ['key.rotated']);
  const en = ok(t, reenable(baseKey({ status: 'disabled' }), dev2, T0));
  t.is(en.next.status, 'active');
  t.is(en.next.withdrawStatus, 'none');
  t.deepEqual(en.events, ['key.enabled']);
});

// ---------------------------------------------------------------------------------------------
// Rule 5

test('rule 5: when the requester leaves the team or changes role, the key loses withdraw', (t) => {
  // The owner rotated since, so the requester no longer holds the secret: only rule 5 applies.
  const key = approvedKey({ secretHolder: OWNER, secretGeneration: 2 });
  const r = memberLeftOrChangedRole(key, DEV, at(HOUR));
  t.is(r.next.withdrawStatus, 'none');
  t.false(hasWithdraw(r.next));
  t.deepEqual(r.next.permissions, OTHER_PERMS);
  t.false(r.next.rotationRequired);
  t.deepEqual(r.events, ['withdraw.lost']);
  payoutRefused(t, r.next, 403, 'auth.permission_denied');
});

test('rule 5: when the approver leaves the team or changes role, the key loses withdraw', (t) => {
  const r = memberLeftOrChangedRole(approvedKey(), ADMIN, at(HOUR));
  t.is(r.next.withdrawStatus, 'none');
  t.false(hasWithdraw(r.next));
  t.is(r.next.withdrawGrantedBy, null);
  t.false(r.next.rotationRequired);
  t.deepEqual(r.events, ['withdraw.lost']);
  // An owner who granted directly counts as the approver.
  const g = memberLeftOrChangedRole(ownerKey({ secretHolder: DEV }), OWNER, at(HOUR));
  t.deepEqual(g.events, ['withdraw.lost']);
});

test('rule 5: when the requester of a waiting request leaves, the request is cancelled', (t) => {
  const key = pendingKey({ secretHolder: OWNER, secretGeneration: 2 });
  const r = memberLeftOrChangedRole(key, DEV, at(HOUR));
  t.is(r.next.withdrawStatus, 'none');
  t.is(r.next.withdrawRequest, null);
  t.deepEqual(r.events, ['withdraw.request_cancelled']);
});

test('rule 5: a member who neither asked, approved nor holds a secret leaves the key as it is', (t) => {
  const key = approvedKey();
  const r = memberLeftOrChangedRole(key, DEV2, at(HOUR));
  t.deepEqual(r.next, key);
  t.deepEqual(r.events, []);
  payoutAllowed(t, r.next, at(HOUR));
});

// ---------------------------------------------------------------------------------------------
// Rule 6

test('rule 6: if the whitelist differs at approval time, the approval is refused and the request is cancelled', (t) => {
  // An owner's change keeps the request waiting; the approval then fails.
  const changed = ok(t, changeWhitelist(pendingKey(), owner, ['192.0.2.1'], at(HOUR)));
  t.is(changed.next.withdrawStatus, 'pending');
  t.deepEqual(changed.events, ['key.whitelist_changed']);

  const r = refused(t, approveRequest(changed.next, admin, at(2 * HOUR)), 409, 'conflict');
  t.is(r.next?.withdrawStatus, 'none');
  t.is(r.next?.withdrawRequest, null);
  t.false(hasWithdraw(r.next as KeyState));
  t.deepEqual(r.next?.ipWhitelist, ['192.0.2.1']);
  t.deepEqual(r.events, ['withdraw.request_cancelled']);
});

test('rule 6: the approval is tied to the IP whitelist as it was when the request was filed', (t) => {
  // Same entries, other order and spelling: not a difference.
  const key = pendingKey({ ipWhitelist: [' 198.51.100.7', '203.0.113.0/24', '198.51.100.7'] });
  const r = ok(t, approveRequest(key, admin, at(HOUR)));
  t.is(r.next.withdrawStatus, 'granted');
  // An empty whitelist at request and approval time matches too.
  ok(t, approveRequest(pendingKey({ ipWhitelist: [], withdrawRequest: { requestedBy: DEV, requestedAt: T0, ipWhitelistAtRequest: [] } }), owner, T0));
});

// ---------------------------------------------------------------------------------------------
// Rule 7

test('rule 7: a Developer who changes the whitelist of a key that has withdraw confirms with a two-factor code', (t) => {
  const r = refusedUnchanged(t, changeWhitelist(approvedKey(), dev, ['192.0.2.0/28'], at(HOUR)), 400, 'validation_error');
  t.is(r.details.field, 'otp');
});

test('rule 7: the key loses withdraw and a new request waits for an owner or admin', (t) => {
  const now = at(HOUR);
  const r = ok(t, changeWhitelist(approvedKey(), devOtp, ['192.0.2.0/28'], now));
  t.deepEqual(r.next.ipWhitelist, ['192.0.2.0/28']);
  t.false(hasWithdraw(r.next));
  t.is(r.next.withdrawStatus, 'pending');
  t.is(r.next.withdrawGrantedBy, null);
  t.deepEqual(r.next.withdrawRequest, { requestedBy: DEV, requestedAt: now, ipWhitelistAtRequest: ['192.0.2.0/28'] });
  t.deepEqual(r.events, ['key.whitelist_changed', 'withdraw.lost', 'withdraw.requested']);
  payoutRefused(t, r.next, 403, 'withdraw_pending_approval', { now });
  // The new request is approvable against the new whitelist.
  ok(t, approveRequest(r.next, admin, at(2 * HOUR)));
});

test('rule 7: a Developer who changes the whitelist of a key with a pending request has the request cancelled and a new one filed', (t) => {
  const now = at(HOUR);
  const r = ok(t, changeWhitelist(pendingKey(), devOtp, ['192.0.2.9'], now));
  t.is(r.next.withdrawStatus, 'pending');
  t.deepEqual(r.next.withdrawRequest, { requestedBy: DEV, requestedAt: now, ipWhitelistAtRequest: ['192.0.2.9'] });
  t.deepEqual(r.events, ['key.whitelist_changed', 'withdraw.request_cancelled', 'withdraw.requested']);
  refusedUnchanged(t, changeWhitelist(pendingKey(), dev, ['192.0.2.9'], now), 400, 'validation_error');
});

test('rule 7: other whitelist changes need no two-factor code and keep withdraw', (t) => {
  // A Developer on a key without withdraw.
  const a = ok(t, changeWhitelist(baseKey(), dev, ['192.0.2.1'], T0));
  t.deepEqual(a.next.ipWhitelist, ['192.0.2.1']);
  t.is(a.next.withdrawStatus, 'none');
  t.deepEqual(a.events, ['key.whitelist_changed']);
  // An owner or admin on a key with withdraw.
  const b = ok(t, changeWhitelist(approvedKey(), noOtp(admin), ['2001:db8::/32'], T0));
  t.is(b.next.withdrawStatus, 'granted');
  t.deepEqual(b.events, ['key.whitelist_changed']);
  // The same set of entries is no change at all, even for a Developer on a payout key.
  const c = ok(t, changeWhitelist(approvedKey(), dev, [...WL].reverse(), T0));
  t.deepEqual(c.next, approvedKey());
  t.deepEqual(c.events, []);
});

test('rule 7: a whitelist entry must be an IP address or a CIDR block', (t) => {
  for (const bad of ['example.com', '10.0.0.0/33', '10.0.0.1/', '2001:db8::/129', '']) {
    const r = refusedUnchanged(t, changeWhitelist(baseKey(), owner, ['10.0.0.1', bad], T0), 400, 'validation_error');
    t.is(r.details.field, 'ip_whitelist');
  }
});

// ---------------------------------------------------------------------------------------------
// Rule 8

test('rule 8: a developer who does not hold the current secret cannot ask for withdraw', (t) => {
  refusedUnchanged(t, addWithdraw(baseKey(), dev2, T0), 409, 'conflict', 'withdraw_requires_rotation');
  // The holder can.
  ok(t, addWithdraw(baseKey(), dev, T0));
});

test('rule 8: a developer who does not hold the current secret cannot re-enable a payout key', (t) => {
  refusedUnchanged(t, reenable(approvedKey({ status: 'disabled' }), dev2, T0), 409, 'conflict', 'withdraw_requires_rotation');
  refusedUnchanged(t, reenable(pendingKey({ status: 'disabled' }), dev2, T0), 409, 'conflict', 'withdraw_requires_rotation');
});

test('rule 8: a developer who does not hold the current secret cannot change the whitelist of a payout key', (t) => {
  refusedUnchanged(t, changeWhitelist(approvedKey(), dev2, ['192.0.2.1'], T0), 409, 'conflict', 'withdraw_requires_rotation');
  refusedUnchanged(t, changeWhitelist(pendingKey(), dev2, ['192.0.2.1'], T0), 409, 'conflict', 'withdraw_requires_rotation');
  const err = refusalToApiError(refused(t, addWithdraw(baseKey(), dev2, T0), 409, 'conflict', 'withdraw_requires_rotation'));
  t.deepEqual(err.toBody().error.details, { reason: 'withdraw_requires_rotation' });
});

test('rule 8: they rotate the key first', (t) => {
  const rot = ok(t, rotate(baseKey(), dev2, T0));
  t.is(rot.next.secretHolder, DEV2);
  t.is(rot.next.secretGeneration, 2);
  const r = ok(t, addWithdraw(rot.next, dev2, at(HOUR)));
  t.is(r.next.withdrawStatus, 'pending');
  t.is(r.next.withdrawRequest?.requestedBy, DEV2);
  // On a payout key the rotation itself asks again in their name.
  const p = ok(t, rotate(approvedKey(), dev2, T0));
  t.is(p.next.withdrawRequest?.requestedBy, DEV2);
  t.is(p.next.withdrawStatus, 'pending');
});

test('rule 8: the approval is tied to the person holding the current secret, so a rotation by someone else cancels a waiting request', (t) => {
  const r = ok(t, rotate(pendingKey(), owner, at(HOUR)));
  t.is(r.next.secretHolder, OWNER);
  t.is(r.next.withdrawStatus, 'none');
  t.is(r.next.withdrawRequest, null);
  t.deepEqual(r.events, ['key.rotated', 'withdraw.request_cancelled']);
  // A request whose requester no longer holds the secret is not approved.
  const stale = pendingKey({ secretHolder: DEV2, secretGeneration: 2 });
  const a = refused(t, approveRequest(stale, owner, at(HOUR)), 409, 'conflict', 'withdraw_requires_rotation');
  t.is(a.next?.withdrawStatus, 'none');
  t.deepEqual(a.events, ['withdraw.request_cancelled']);
});

// ---------------------------------------------------------------------------------------------
// Rule 9

test('rule 9: a key with rotation_required has lost its payout permission and any pending request', (t) => {
  const g = ok(t, requireRotation(approvedKey(), owner));
  t.true(g.next.rotationRequired);
  t.is(g.next.withdrawStatus, 'none');
  t.deepEqual(g.next.permissions, OTHER_PERMS, 'the other permissions keep working');
  t.is(g.next.status, 'active');
  t.deepEqual(g.events, ['key.rotation_required', 'withdraw.lost']);
  payoutRefused(t, g.next, 403, 'auth.permission_denied');

  const p = ok(t, requireRotation(pendingKey(), noOtp(admin)));
  t.is(p.next.withdrawRequest, null);
  t.deepEqual(p.events, ['key.rotation_required', 'withdraw.request_cancelled']);
  // Even a stale state with withdraw still marked cannot pay out.
  payoutRefused(t, approvedKey({ rotationRequired: true }), 403, 'auth.permission_denied');
});

test('rule 9: only an owner or admin sets rotation_required', (t) => {
  const r = refusedUnchanged(t, requireRotation(approvedKey(), devOtp), 403, 'forbidden');
  t.deepEqual(r.details.required, ['owner', 'admin']);
});

test('rule 9: nobody can add or ask for withdraw on a key with rotation_required until the secret is rotated', (t) => {
  const key = baseKey({ rotationRequired: true });
  for (const actor of [owner, admin, dev, dev2]) {
    refusedUnchanged(t, addWithdraw(key, actor, T0), 409, 'conflict', 'withdraw_requires_rotation');
  }
  const rot = ok(t, rotate(key, dev, T0));
  t.false(rot.next.rotationRequired);
  t.is(ok(t, addWithdraw(rot.next, dev, T0)).next.withdrawStatus, 'pending');
  t.is(ok(t, addWithdraw(rot.next, owner, T0)).next.withdrawStatus, 'granted');
});

test('rule 9: rotation_required becomes true when the member holding the current secret leaves the team or changes role', (t) => {
  const r = memberLeftOrChangedRole(pendingKey(), DEV, at(HOUR));
  t.true(r.next.rotationRequired);
  t.is(r.next.withdrawStatus, 'none');
  t.is(r.next.withdrawRequest, null);
  t.deepEqual(r.next.permissions, OTHER_PERMS);
  t.deepEqual(r.events, ['withdraw.request_cancelled', 'key.rotation_required']);
  const o = memberLeftOrChangedRole(ownerKey(), OWNER, at(HOUR));
  t.true(o.next.rotationRequired);
  t.false(hasWithdraw(o.next));
});

// ---------------------------------------------------------------------------------------------
// Rotation, disabling and revocation

test('rotation 1: rotate issues a new secret and the previous secret keeps working for 10 minutes', (t) => {
  const now = at(HOUR);
  const r = ok(t, rotate(baseKey({ rotationRequired: true }), dev2, now));
  t.is(r.next.secretGeneration, 2);
  t.is(r.next.secretHolder, DEV2);
  t.false(r.next.rotationRequired);
  t.deepEqual(r.next.previousSecret, { holder: DEV, validUntil: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS) });
  t.deepEqual(r.events, ['key.rotated']);
});

test('rotation 1: rotating again within the window drops the oldest secret', (t) => {
  const first = ok(t, rotate(baseKey(), dev2, T0)).next;
  const second = ok(t, rotate(first, owner, at(60_000))).next;
  t.is(second.secretGeneration, 3);
  t.is(second.secretHolder, OWNER);
  t.deepEqual(second.previousSecret, { holder: DEV2, validUntil: at(60_000 + PREVIOUS_SECRET_GRACE_MS) });
});

test('rotation 1: after the window the previous secret no longer verifies', (t) => {
  const key = ok(t, rotate(ownerKey(), owner, T0)).next;
  payoutRefused(t, key, 401, 'auth.invalid_signature', { used: 'previous', prevRole: 'owner', now: at(PREVIOUS_SECRET_GRACE_MS) });
  payoutRefused(t, baseKey(), 401, 'auth.invalid_signature', { used: 'previous', prevRole: 'developer' });
});

test('rotation 2: a payout signed with the previous secret is 403 auth.permission_denied with reason previous_secret', (t) => {
  const key = ok(t, rotate(approvedKey(), admin, T0)).next;
  payoutAllowed(t, key, at(60_000));
  payoutRefused(t, key, 403, 'auth.permission_denied', { used: 'previous', prevRole: 'developer', now: at(60_000), reason: 'previous_secret' });
  const d = payoutDecision(key, 'previous', at(60_000), 'developer');
  if (!d.allowed) t.deepEqual(d.details, { required: 'withdraw', reason: 'previous_secret' });
});

test('rotation 3: an owner or admin who rotates a key whose secret they already held and whose withdraw they granted keeps payouts on the previous secret', (t) => {
  const key = ok(t, rotate(ownerKey(), owner, T0)).next;
  t.is(key.withdrawStatus, 'granted');
  t.deepEqual(payoutDecision(key, 'previous', at(60_000), 'owner'), { allowed: true });
  t.deepEqual(payoutDecision(key, 'current', at(60_000), 'owner'), { allowed: true });
  const adminKey = ok(t, rotate(ownerKey({ secretHolder: ADMIN, withdrawGrantedBy: ADMIN }), admin, T0)).next;
  t.deepEqual(payoutDecision(adminKey, 'previous', at(60_000), 'admin'), { allowed: true });
});

test('rotation 3: the exception needs the same owner or admin to have held the secret, granted withdraw and rotated', (t) => {
  const opts = { used: 'previous' as const, now: at(60_000), reason: 'previous_secret' };
  // Held it, but an admin granted withdraw.
  const a = ok(t, rotate(ownerKey({ withdrawGrantedBy: ADMIN }), owner, T0)).next;
  payoutRefused(t, a, 403, 'auth.permission_denied', { ...opts, prevRole: 'owner' });
  // Granted it, but a developer held the secret.
  const b = ok(t, rotate(ownerKey({ secretHolder: DEV }), owner, T0)).next;
  payoutRefused(t, b, 403, 'auth.permission_denied', { ...opts, prevRole: 'developer' });
  // Held and granted it, but someone else rotated.
  const c = ok(t, rotate(ownerKey(), admin, T0)).next;
  payoutRefused(t, c, 403, 'auth.permission_denied', { ...opts, prevRole: 'owner' });
  // Held, granted and rotated, but is no longer owner or admin.
  const d = ok(t, rotate(ownerKey(), owner, T0)).next;
  payoutRefused(t, d, 403, 'auth.permission_denied', { ...opts, prevRole: 'developer' });
});

test('rotation 4: a previous secret ends early when the person who held it leaves the team or changes role', (t) => {
  const key = ok(t, rotate(baseKey(), owner, T0)).next;
  const r = memberLeftOrChangedRole(key, DEV, at(60_000));
  t.is(r.next.previousSecret, null);
  t.false(r.next.rotationRequired, 'the current secret is not theirs');
  t.deepEqual(r.events, ['key.previous_secret_ended']);
  // Requests signed with it are then 401 auth.invalid_signature.
  payoutRefused(t, r.next, 401, 'auth.invalid_signature', { used: 'previous', now: at(60_000) });
  payoutRefused(t, ok(t, rotate(ownerKey(), owner, T0)).next, 401, 'auth.invalid_signature', {
    used: 'previous',
    prevRole: null,
    now: at(60_000),
  });
  // The rotation asked for after the holder left gives their secret no grace.
  const gone = memberLeftOrChangedRole(baseKey(), DEV, T0).next;
  const rot = ok(t, rotate(gone, owner, at(HOUR), false));
  t.is(rot.next.previousSecret, null);
  t.false(rot.next.rotationRequired);
});

test('rotation 5: disable stops the key until it is enabled again', (t) => {
  const d = ok(t, disable(approvedKey(), dev, T0));
  t.is(d.next.status, 'disabled');
  t.is(d.next.withdrawStatus, 'granted');
  t.deepEqual(d.events, ['key.disabled']);
  payoutRefused(t, d.next, 401, 'auth.invalid_key');
  const e = ok(t, reenable(d.next, admin, at(HOUR)));
  t.is(e.next.status, 'active');
  payoutAllowed(t, e.next, at(HOUR));
  // Enabling an active key changes nothing.
  t.deepEqual(ok(t, reenable(approvedKey(), dev2, T0)).events, []);
});

test('rotation 6: revoke is final and cannot be undone', (t) => {
  const r = ok(t, revoke(approvedKey(), owner, T0));
  t.is(r.next.status, 'revoked');
  t.deepEqual(r.events, ['key.revoked']);
  const key = r.next;
  payoutRefused(t, key, 401, 'auth.invalid_key');
  refusedUnchanged(t, reenable(key, owner, T0), 409, 'conflict');
  refusedUnchanged(t, rotate(key, owner, T0), 409, 'conflict');
  refusedUnchanged(t, disable(key, owner, T0), 409, 'conflict');
  refusedUnchanged(t, addWithdraw(key, owner, T0), 409, 'conflict');
  refusedUnchanged(t, changeWhitelist(key, owner, ['192.0.2.1'], T0), 409, 'conflict');
  refusedUnchanged(t, requireRotation(key, owner), 409, 'conflict');
  refusedUnchanged(t, approveRequest(pendingKey({ status: 'revoked' }), owner, T0), 409, 'conflict');
  t.deepEqual(ok(t, revoke(key, owner, T0)).events, []);
  t.deepEqual(memberLeftOrChangedRole(key, ADMIN, T0).events, []);
});

test('rotation 7: every change reports what changed for the security log, and a no-op reports nothing', (t) => {
  let k = baseKey();
  const log: string[] = [];
  const step = (d: Decision): void => {
    k = ok(t, d).next;
    log.push(...(d.ok ? d.events : []));
  };
  step(addWithdraw(k, dev, T0));
  step(approveRequest(k, owner, at(HOUR)));
  step(addWithdraw(k, owner, at(HOUR)));
  step(rotate(k, owner, at(2 * HOUR)));
  step(requireRotation(k, admin));
  step(requireRotation(k, admin));
  t.deepEqual(log, ['withdraw.requested', 'withdraw.approved', 'key.rotated', 'key.rotation_required', 'withdraw.lost']);
});

// ---------------------------------------------------------------------------------------------
// Purity

test('decisions never change the key they are given', (t) => {
  const keys = [baseKey(), pendingKey(), approvedKey(), ownerKey({ previousSecret: { holder: DEV, validUntil: at(1) } })];
  for (const key of keys) {
    const copy = structuredClone(key);
    addWithdraw(key, owner, T0);
    addWithdraw(key, dev, at(REQUEST_TTL_MS));
    approveRequest(key, admin, at(REQUEST_TTL_MS));
    approveRequest(key, admin, T0);
    rejectRequest(key, admin, T0);
    expireRequests(key, at(REQUEST_TTL_MS));
    changeWhitelist(key, devOtp, ['192.0.2.1'], T0);
    rotate(key, dev, T0);
    disable(key, dev, T0);
    reenable(key, dev, T0);
    revoke(key, owner, T0);
    memberLeftOrChangedRole(key, DEV, T0);
    memberLeftOrChangedRole(key, OWNER, T0);
    requireRotation(key, owner);
    payoutDecision(key, 'previous', T0, 'owner');
    t.deepEqual(key, copy);
  }
  // And `next` shares no arrays or dates with the input.
  const key = approvedKey();
  const next = ok(t, rotate(key, admin, T0)).next;
  t.not(next.permissions, key.permissions);
  t.not(next.ipWhitelist, key.ipWhitelist);
  t.not(next.withdrawRequest?.requestedAt, key.withdrawRequest?.requestedAt);
});

// ---------------------------------------------------------------------------------------------
// Setting a key's permissions (the key service's update)

test('setting permissions with withdraw: a Developer holding the secret asks, an owner with a code grants', (t) => {
  const asked = ok(t, setPermissions(baseKey(), dev, ['read', 'withdraw'], T0));
  t.deepEqual(asked.next.permissions, ['read']);
  t.is(asked.next.withdrawStatus, 'pending');
  t.deepEqual(asked.events, ['withdraw.requested']);
  const granted = ok(t, setPermissions(baseKey(), owner, ['read', 'withdraw'], T0));
  t.deepEqual(granted.next.permissions, ['read', 'withdraw']);
  t.deepEqual(granted.events, ['withdraw.granted']);
});

test('rule 8: a Developer who does not hold the secret asks for withdraw by setting permissions: 409 withdraw_requires_rotation, nothing changes; after rotating they may ask', (t) => {
  const key = baseKey({ secretHolder: OWNER });
  refusedUnchanged(t, setPermissions(key, dev2, ['read', 'withdraw'], T0), 409, 'conflict', 'withdraw_requires_rotation');
  const rotated = ok(t, rotate(key, dev2, T0));
  t.is(rotated.next.secretHolder, DEV2);
  t.is(ok(t, setPermissions(rotated.next, dev2, ['read', 'withdraw'], T0)).next.withdrawStatus, 'pending');
});

test('setting permissions without withdraw takes it away: a granted withdraw is lost, a waiting request cancelled', (t) => {
  const lost = ok(t, setPermissions(approvedKey(), dev, ['read'], at(HOUR)));
  t.deepEqual(lost.next.permissions, ['read']);
  t.is(lost.next.withdrawStatus, 'none');
  t.is(lost.next.withdrawRequest, null);
  t.deepEqual(lost.events, ['withdraw.lost']);
  const cancelled = ok(t, setPermissions(pendingKey(), dev, ['read'], at(HOUR)));
  t.is(cancelled.next.withdrawStatus, 'none');
  t.deepEqual(cancelled.events, ['withdraw.request_cancelled']);
});

test('setting permissions that keep withdraw changes the others only', (t) => {
  const kept = ok(t, setPermissions(approvedKey(), dev, ['read', 'withdraw'], at(HOUR)));
  t.deepEqual(kept.next.permissions, ['read', 'withdraw']);
  t.is(kept.next.withdrawStatus, 'granted');
  t.deepEqual(kept.events, []);
});
