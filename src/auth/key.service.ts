import type { EntityManager } from 'typeorm';
import type { Config } from '../config/schema';
import { ApiKeyEntity, type ApiKeyRow, type KeyStatus } from '../db/entities/auth';
import { applyKeyset, type PageKey } from '../db/keyset';
import { placeholder, rawQuery } from '../db/raw';
import { MemberEntity, type AccountRow, type MemberRow, type Role } from '../db/entities/team';
import type { Sealer } from '../db/seal';
import { cells } from '../db/sealed-values';
import type { Store } from '../db/store';
import type { Clock } from '../shared/clock';
import { iso } from '../shared/clock';
import { ApiError, notFound, validationError } from '../shared/errors';
import { newId, randomBase62, randomSecret } from '../shared/ids';
import { SYSTEM, type MemberChange, type TeamService } from '../team/team.service';
import { PERMISSIONS, type Permission } from './auth.middleware';
import type { KeyEntry, KeyRegistry } from './key-registry';
import { DEFAULT_REQUESTS_PER_MINUTE } from './token-bucket';
import type { SensitiveLimiter } from './sensitive-limiter';
import * as wp from './withdraw-permission';

export interface KeyActor {
  email: string;
  otp?: string;
}

export interface KeyChanges {
  name?: unknown;
  permissions?: unknown;
  ip_whitelist?: unknown;
  rate_limit_per_minute?: unknown;
}

interface StoredRequest {
  id: string;
  requested_by: string;
  requested_at: string;
  ip_whitelist: string[];
}

/** The key as the cabinet and GET /v1/account/api-keys show it; never a secret. */
export function presentKey(row: ApiKeyRow) {
  return {
    key_id: row.key_id,
    name: row.name,
    permissions: row.permissions.split(',').filter(Boolean),
    withdraw_status: row.withdraw_status,
    network: row.network,
    ip_whitelist: JSON.parse(row.ip_whitelist) as string[],
    rate_limit_per_minute: row.rate_limit_per_minute,
    status: row.status,
    secret_last4: row.secret_last4,
    secret_holder: row.secret_holder,
    secret_generation: row.secret_generation,
    rotation_required: Boolean(row.rotation_required),
    previous_secret_valid_until: row.previous_secret_valid_until,
    created_at: row.created_at,
  };
}

/** The columns of a key its withdraw state is made of (`toState`). */
const STATE_COLUMNS = [
  'permissions',
  'withdraw_status',
  'withdraw_granted_by',
  'withdraw_request',
  'ip_whitelist',
  'secret_holder',
  'secret_generation',
  'rotation_required',
  'previous_secret_holder',
  'previous_secret_valid_until',
  'status',
] as const;
type StateRow = Pick<ApiKeyRow, (typeof STATE_COLUMNS)[number]>;
const STATE_SELECT = STATE_COLUMNS.map((c) => `"${c}"`).join(', ');

const toState = (row: StateRow): wp.KeyState => {
  const req = row.withdraw_request ? (JSON.parse(row.withdraw_request) as StoredRequest) : null;
  return {
    permissions: row.permissions.split(',').filter(Boolean),
    withdrawStatus: row.withdraw_status,
    withdrawGrantedBy: row.withdraw_granted_by,
    withdrawRequest: req ? { requestedBy: req.requested_by, requestedAt: new Date(req.requested_at), ipWhitelistAtRequest: req.ip_whitelist } : null,
    ipWhitelist: JSON.parse(row.ip_whitelist) as string[],
    secretHolder: row.secret_holder,
    secretGeneration: row.secret_generation,
    rotationRequired: Boolean(row.rotation_required),
    previousSecret:
      row.previous_secret_holder && row.previous_secret_valid_until
        ? { holder: row.previous_secret_holder, validUntil: new Date(row.previous_secret_valid_until) }
        : null,
    status: row.status,
  };
};

/**
 * API keys and the withdraw permission. Every decision about withdraw, rotation and member
 * departures is made by the pure module `withdraw-permission`; this service loads, persists,
 * seals secrets, writes the security log and keeps the key registry exact.
 */
export class KeyService {
  constructor(
    private readonly store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    private readonly config: Config,
    private readonly team: TeamService,
    private readonly registry: KeyRegistry,
    private readonly limiter: SensitiveLimiter,
  ) {
    team.onMemberChange((em, change) => this.memberChanged(em, change));
    team.onAccountChange(() => this.registry.invalidate());
  }

  async create(
    accountId: string,
    actor: KeyActor,
    input: { name?: unknown; permissions?: unknown; ip_whitelist?: unknown; rate_limit_per_minute?: unknown; test?: unknown },
  ) {
    const test = input.test === true;
    if (test && this.config.network === 'mainnet') throw validationError('mode', 'test keys cannot be created on a mainnet environment');
    const name = checkKeyName(input.name);
    const permissions = checkPermissions(input.permissions);
    const ipWhitelist = checkWhitelist(input.ip_whitelist ?? []);
    const rateLimit = checkRateLimit(input.rate_limit_per_minute ?? DEFAULT_REQUESTS_PER_MINUTE);
    return this.store.write(async (em) => {
      const member = await this.actingMember(em, accountId, actor, ['owner', 'admin', 'developer'], false);
      this.limit(accountId, member, null);
      const secret = randomSecret();
      const now = this.clock.now();
      const id = newId();
      const row: ApiKeyRow = {
        id,
        account_id: accountId,
        key_id: `ck_${test ? 'test' : 'live'}_${randomBase62(24)}`,
        name,
        network: this.config.network,
        permissions: permissions.filter((p) => p !== 'withdraw').join(','),
        withdraw_status: 'none',
        withdraw_granted_by: null,
        withdraw_request: null,
        ip_whitelist: JSON.stringify(ipWhitelist),
        rate_limit_per_minute: rateLimit,
        status: 'active',
        secret_sealed: this.sealer.seal(secret, cells.keySecret(id)),
        secret_last4: secret.slice(-4),
        secret_holder: member.id,
        secret_generation: 1,
        rotation_required: false,
        previous_secret_sealed: null,
        previous_secret_holder: null,
        previous_secret_valid_until: null,
        created_by: member.id,
        created_at: iso(now),
        updated_at: iso(now),
      };
      let events: string[] = [];
      if (permissions.includes('withdraw')) {
        const d = wp.addWithdraw(toState(row), await this.wpActor(em, member, actor), now);
        if (!d.ok) throw wp.refusalToApiError(d);
        this.apply(row, d.next);
        events = d.events;
      }
      await em.insert(ApiKeyEntity, row);
      await this.team.log(em, accountId, member.email, 'key.created', {
        key_id: row.key_id,
        name,
        permissions: row.permissions,
        ip_whitelist: ipWhitelist,
        rate_limit_per_minute: rateLimit,
      });
      for (const e of events) await this.team.log(em, accountId, member.email, e, { key_id: row.key_id });
      this.registry.invalidate();
      return { key: { ...presentKey(row), secret, request_id: row.withdraw_request ? (JSON.parse(row.withdraw_request) as StoredRequest).id : null } };
    });
  }

  async list(accountId: string) {
    await this.team.getAccount(accountId);
    const rows = await this.store.read.find(ApiKeyEntity, { where: { account_id: accountId }, order: { created_at: 'ASC', id: 'ASC' } });
    return rows.map(presentKey);
  }

  /** One keyset page (newest first) of the account's keys, optionally of one status; `limit + 1` rows. */
  async listPage(accountId: string, filters: { status?: KeyStatus }, page: { limit: number; after: PageKey | null }): Promise<ApiKeyRow[]> {
    await this.team.getAccount(accountId);
    const qb = this.store.read.createQueryBuilder(ApiKeyEntity, 'k').where('k.account_id = :account', { account: accountId });
    if (filters.status) qb.andWhere('k.status = :status', { status: filters.status });
    return applyKeyset(qb, 'k', page).getMany();
  }

  async show(accountId: string, keyId: string) {
    return presentKey(await this.load(this.store.read, accountId, keyId));
  }

  /** Any member may rotate a key of the account: a Developer who does not hold it becomes its holder (SPEC withdraw rule 8). */
  rotate(accountId: string, keyId: string, actor: KeyActor) {
    return this.change(accountId, keyId, actor, { roles: ['owner', 'admin', 'developer'], otp: false, own: false }, async (em, row, _who, a, now) => {
      const oldHolder = await em.findOneBy(MemberEntity, { id: row.secret_holder, status: 'active' });
      const d = wp.rotate(toState(row), a, now, oldHolder !== null);
      if (!d.ok) return d;
      const secret = randomSecret();
      // The outgoing secret moves to the previous column: sealed again, bound to that column.
      row.previous_secret_sealed = d.next.previousSecret
        ? this.sealer.seal(this.sealer.open(row.secret_sealed, cells.keySecret(row.id)), cells.keyPreviousSecret(row.id))
        : null;
      row.secret_sealed = this.sealer.seal(secret, cells.keySecret(row.id));
      row.secret_last4 = secret.slice(-4);
      return { ...d, secret };
    });
  }

  disable(accountId: string, keyId: string, actor: KeyActor) {
    return this.change(accountId, keyId, actor, { roles: ['owner', 'admin', 'developer'], otp: false, own: true }, async (_em, row, _w, a, now) =>
      wp.disable(toState(row), a, now),
    );
  }

  enable(accountId: string, keyId: string, actor: KeyActor) {
    return this.change(accountId, keyId, actor, { roles: ['owner', 'admin', 'developer'], otp: false, own: true }, async (_em, row, _w, a, now) =>
      wp.reenable(toState(row), a, now),
    );
  }

  revoke(accountId: string, keyId: string, actor: KeyActor) {
    return this.change(accountId, keyId, actor, { roles: ['owner', 'admin', 'developer'], otp: false, own: true }, async (_em, row, _w, a, now) =>
      wp.revoke(toState(row), a, now),
    );
  }

  requireRotation(accountId: string, keyId: string, actor: KeyActor) {
    return this.change(accountId, keyId, actor, { roles: ['owner', 'admin'], otp: false, own: false }, async (_em, row, _w, a) =>
      wp.requireRotation(toState(row), a),
    );
  }

  /** `id`: the key's id or its pending request's id (a key has at most one open request). */
  approveRequest(accountId: string, id: string, actor: KeyActor) {
    return this.change(accountId, id, actor, { roles: ['owner', 'admin'], otp: true, own: false, byRequest: true }, async (_em, row, _w, a, now) =>
      wp.approveRequest(toState(row), a, now),
    );
  }

  rejectRequest(accountId: string, id: string, actor: KeyActor) {
    return this.change(accountId, id, actor, { roles: ['owner', 'admin'], otp: true, own: false, byRequest: true }, async (_em, row, _w, a, now) =>
      wp.rejectRequest(toState(row), a, now),
    );
  }

  /** Name and rate limit change freely; permissions and whitelist go through the withdraw rules. */
  update(accountId: string, keyId: string, actor: KeyActor, changes: KeyChanges) {
    const name = changes.name === undefined ? undefined : checkKeyName(changes.name);
    const permissions = changes.permissions === undefined ? undefined : checkPermissions(changes.permissions);
    const whitelist = changes.ip_whitelist === undefined ? undefined : checkWhitelist(changes.ip_whitelist);
    const rateLimit = changes.rate_limit_per_minute === undefined ? undefined : checkRateLimit(changes.rate_limit_per_minute);
    if ([name, permissions, whitelist, rateLimit].every((v) => v === undefined)) throw validationError('changes', 'name at least one change');
    const needsOtp = Boolean(permissions?.includes('withdraw') || whitelist !== undefined);
    return this.change(
      accountId,
      keyId,
      actor,
      { roles: ['owner', 'admin', 'developer'], otp: needsOtp && actor.otp !== undefined, own: true },
      async (em, row, who, a, now) => {
        let state = toState(row);
        const events: wp.KeyEvent[] = [];
        if (whitelist !== undefined && !wp.sameWhitelist(whitelist, state.ipWhitelist)) {
          const d = wp.changeWhitelist(state, a, whitelist, now);
          if (!d.ok) return d;
          state = d.next;
          events.push(...d.events);
        }
        if (permissions !== undefined) {
          const d = wp.setPermissions(state, a, permissions, now);
          if (!d.ok) return d;
          state = d.next;
          events.push(...d.events);
        }
        // Name, permissions and rate limit are logged here; whitelist and withdraw changes by their events.
        const changed: Record<string, unknown> = {};
        if (name !== undefined && name !== row.name) changed.name = { from: row.name, to: name };
        if (rateLimit !== undefined && rateLimit !== row.rate_limit_per_minute)
          changed.rate_limit_per_minute = { from: row.rate_limit_per_minute, to: rateLimit };
        if (state.permissions.join(',') !== row.permissions) changed.permissions = { from: row.permissions, to: state.permissions.join(',') };
        if (Object.keys(changed).length) await this.team.log(em, row.account_id, who.email, 'key.updated', { key_id: row.key_id, ...changed });
        if (name !== undefined) row.name = name;
        if (rateLimit !== undefined) row.rate_limit_per_minute = rateLimit;
        return { ok: true as const, next: state, events };
      },
    );
  }

  async withdrawRequests(accountId: string) {
    await this.team.getAccount(accountId);
    const rows = await this.store.read.find(ApiKeyEntity, { where: { account_id: accountId, withdraw_status: 'pending' }, order: { created_at: 'ASC' } });
    return rows.map((r) => ({ key: presentKey(r), request: JSON.parse(r.withdraw_request ?? 'null') as StoredRequest | null }));
  }

  /**
   * The payout route's question (withdrawals issue): may this signed request pay out? On one
   * daemon the key registry's row is the stored row (every change to a key, a member or an account
   * invalidates it, as authentication relies on), so it answers from there, as of this moment, not
   * as of the request's authentication; else, and when the registry no longer holds the key, from
   * the database (the state's columns only: every payout asks it).
   */
  async payoutDecision(key: { apiKeyId: string; keyId: string }, usedSecret: 'current' | 'previous'): Promise<wp.PayoutDecision> {
    let row: StateRow | undefined = this.exactEntry(key)?.row;
    if (!row) {
      const em = this.store.read;
      [row] = await rawQuery<StateRow>(em, `SELECT ${STATE_SELECT} FROM api_keys WHERE id = ${placeholder(em, 1)}`, [key.apiKeyId]);
    }
    if (!row) return { allowed: false, status: 403, code: 'auth.permission_denied', message: 'unknown key', details: { required: 'withdraw' } };
    const holder = row.previous_secret_holder ? await this.store.read.findOneBy(MemberEntity, { id: row.previous_secret_holder, status: 'active' }) : null;
    return wp.payoutDecision(toState(row), usedSecret, this.clock.now(), holder?.role ?? null);
  }

  /**
   * The key's account as stored, when the registry holds it exactly (one daemon: every change to
   * an account invalidates the registry); else null, and the caller reads the account itself.
   */
  exactAccount(key: { apiKeyId: string; keyId: string }): AccountRow | null {
    return this.exactEntry(key)?.account ?? null;
  }

  /** The registry's entry of the key when it is the stored key itself (one daemon), else null. */
  private exactEntry(key: { apiKeyId: string; keyId: string }): KeyEntry | null {
    const cached = this.registry.exact ? this.registry.cached(key.keyId) : undefined;
    return cached && cached.row.id === key.apiKeyId ? cached : null;
  }

  /** Expires withdraw requests older than 72 h (a job runs it). */
  async expireRequests(): Promise<number> {
    const now = this.clock.now();
    const rows = await this.store.read.find(ApiKeyEntity, { where: { withdraw_status: 'pending' } });
    let expired = 0;
    try {
      for (const stale of rows) {
        await this.store.write(async (em) => {
          const row = await em.findOneBy(ApiKeyEntity, { id: stale.id });
          if (!row) return;
          const t = wp.expireRequests(toState(row), now);
          if (t.events.length === 0) return;
          expired++;
          await this.persist(em, row, t.next, t.events, SYSTEM);
        });
      }
    } finally {
      if (rows.length > 0) this.registry.invalidate();
    }
    return expired;
  }

  private async memberChanged(em: EntityManager, change: MemberChange): Promise<void> {
    const rows = await em.find(ApiKeyEntity, { where: { account_id: change.accountId } });
    for (const row of rows) {
      const t = wp.memberLeftOrChangedRole(toState(row), change.memberId, this.clock.now());
      if (t.events.length) await this.persist(em, row, t.next, t.events, change.by);
    }
    this.registry.invalidate();
  }

  private async change(
    accountId: string,
    keyId: string,
    actor: KeyActor,
    need: { roles: readonly Role[]; otp: boolean; own: boolean; byRequest?: boolean },
    decide: (em: EntityManager, row: ApiKeyRow, who: MemberRow, a: wp.Actor, now: Date) => Promise<wp.Decision | (wp.Transition & { secret: string })>,
  ) {
    let refusal: wp.Refusal | null = null;
    // The registry is dropped once the change is committed or rolled back: a request reading the
    // key meanwhile may have cached what the transaction had written so far.
    const result = await this.store
      .write(async (em) => {
        const row = need.byRequest ? await this.loadByRequest(em, accountId, keyId) : await this.load(em, accountId, keyId);
        const member = await this.actingMember(em, accountId, actor, need.roles, need.otp);
        this.limit(accountId, member, row.key_id);
        const now = this.clock.now();
        // The withdraw rules answer first: a Developer asking for withdraw on a key they do not
        // hold hears that they must rotate it (rule 8), not that the key is not theirs.
        const d = await decide(em, row, member, await this.wpActor(em, member, actor, need.otp), now);
        if (!d.ok) {
          refusal = d;
          if (d.next) await this.persist(em, row, d.next, d.events, member.email);
          return null;
        }
        if (need.own && member.role === 'developer' && row.secret_holder !== member.id && row.created_by !== member.id) {
          throw new ApiError(403, 'forbidden', 'a developer manages only the keys they hold or created; rotating the key makes them its holder');
        }
        await this.persist(em, row, d.next, d.events, member.email);
        const secret = 'secret' in d ? d.secret : undefined;
        return { key: { ...presentKey(row), ...(secret ? { secret } : {}) } };
      })
      .finally(() => this.registry.invalidate());
    if (refusal) throw wp.refusalToApiError(refusal);
    return result!;
  }

  private async persist(em: EntityManager, row: ApiKeyRow, next: wp.KeyState, events: readonly string[], actor: string): Promise<void> {
    this.apply(row, next);
    row.updated_at = iso(this.clock.now());
    await em.save(ApiKeyEntity, row);
    for (const e of events) await this.team.log(em, row.account_id, actor, e, { key_id: row.key_id, name: row.name });
  }

  private apply(row: ApiKeyRow, s: wp.KeyState): void {
    row.permissions = s.permissions.join(',');
    row.withdraw_status = s.withdrawStatus;
    row.withdraw_granted_by = s.withdrawGrantedBy;
    const prevReq = row.withdraw_request ? (JSON.parse(row.withdraw_request) as StoredRequest) : null;
    row.withdraw_request =
      s.withdrawStatus === 'pending' && s.withdrawRequest
        ? JSON.stringify({
            id: prevReq && prevReq.requested_at === s.withdrawRequest.requestedAt.toISOString() ? prevReq.id : newId(),
            requested_by: s.withdrawRequest.requestedBy,
            requested_at: s.withdrawRequest.requestedAt.toISOString(),
            ip_whitelist: s.withdrawRequest.ipWhitelistAtRequest,
          } satisfies StoredRequest)
        : null;
    row.ip_whitelist = JSON.stringify(s.ipWhitelist);
    row.secret_holder = s.secretHolder;
    row.secret_generation = s.secretGeneration;
    row.rotation_required = s.rotationRequired;
    row.previous_secret_holder = s.previousSecret?.holder ?? null;
    row.previous_secret_valid_until = s.previousSecret ? s.previousSecret.validUntil.toISOString() : null;
    if (!s.previousSecret) row.previous_secret_sealed = null;
    row.status = s.status;
  }

  private async load(em: EntityManager, accountId: string, keyId: string): Promise<ApiKeyRow> {
    const row = await em.findOneBy(ApiKeyEntity, { key_id: String(keyId), account_id: String(accountId) });
    if (!row) throw notFound('key');
    return row;
  }

  /** The key by its id, or the key whose pending withdraw request has this id. */
  private async loadByRequest(em: EntityManager, accountId: string, id: string): Promise<ApiKeyRow> {
    const key = await em.findOneBy(ApiKeyEntity, { key_id: String(id), account_id: String(accountId) });
    if (key) return key;
    const pending = await em.find(ApiKeyEntity, { where: { account_id: String(accountId), withdraw_status: 'pending' } });
    const row = pending.find((r) => r.withdraw_request !== null && (JSON.parse(r.withdraw_request) as StoredRequest).id === id);
    if (!row) throw notFound('key or withdraw request');
    return row;
  }

  private async actingMember(em: EntityManager, accountId: string, actor: KeyActor, roles: readonly Role[], otp: boolean): Promise<MemberRow> {
    await this.team.authorize(em, accountId, { kind: 'member', email: actor.email, otp: actor.otp }, { roles, otp });
    return this.team.memberByEmail(em, accountId, actor.email);
  }

  /** The decision module's actor; an OTP given but not yet checked is consumed here. */
  private async wpActor(em: EntityManager, member: MemberRow, actor: KeyActor, alreadyChecked = false): Promise<wp.Actor> {
    let otpVerified = alreadyChecked;
    if (!alreadyChecked && actor.otp) {
      await this.team.authorize(em, member.account_id, { kind: 'member', email: member.email, otp: actor.otp }, { roles: [member.role], otp: true });
      otpVerified = true;
    }
    return { memberId: member.id, role: member.role, otpVerified };
  }

  private limit(accountId: string, member: MemberRow, keyId: string | null): void {
    const r = this.limiter.check({ merchant: accountId, person: member.id, ...(keyId ? { key: keyId } : {}) });
    if (!r.allowed) {
      throw new ApiError(
        429,
        'rate_limited',
        'too many key changes; wait before trying again',
        { scope: r.scope, retry_after: r.retryAfterSeconds },
        { 'Retry-After': String(r.retryAfterSeconds) },
      );
    }
  }
}

function checkKeyName(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '' || v.length > 200) throw validationError('name', 'name must be 1 to 200 characters');
  return v.trim();
}

function checkPermissions(v: unknown): Permission[] {
  const list =
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v;
  if (!Array.isArray(list) || list.length === 0) throw validationError('permissions', `permissions: one or more of ${PERMISSIONS.join(', ')}`);
  for (const p of list) if (!PERMISSIONS.includes(p as Permission)) throw validationError('permissions', `unknown permission ${JSON.stringify(p)}`);
  return [...new Set(list as Permission[])];
}

function checkWhitelist(v: unknown): string[] {
  const list =
    typeof v === 'string'
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : v;
  if (!Array.isArray(list) || list.length > 100) throw validationError('ip_whitelist', 'ip_whitelist: a list of up to 100 IPs or CIDRs');
  for (const e of list) if (typeof e !== 'string' || !wp.isWhitelistEntry(e)) throw validationError('ip_whitelist', `not an IP or CIDR: ${JSON.stringify(e)}`);
  return wp.normalizeWhitelist(list as string[]);
}

function checkRateLimit(v: unknown): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw validationError('rate_limit_per_minute', 'rate_limit_per_minute must be an integer from 1 to 100000');
  return n;
}
