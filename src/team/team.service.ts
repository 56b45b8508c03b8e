import type { EntityManager } from 'typeorm';
import { AccountEntity, AccountRow, MemberEntity, MemberRow, Role, SecurityLogEntity } from '../db/entities/team';
import type { Sealer } from '../db/seal';
import { cells } from '../db/sealed-values';
import type { Store } from '../db/store';
import { ApiError, notFound, validationError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { iso } from '../shared/clock';
import { newId } from '../shared/ids';
import { Amount } from '../shared/amount';
import { matchTotpStep, newTotpSecret, otpauthUrl } from './totp';

export const ROLES: readonly Role[] = ['owner', 'admin', 'developer'];
/** A change to a higher rank is a promotion: it gives rights the member did not have. */
const RANK: Readonly<Record<Role, number>> = { developer: 0, admin: 1, owner: 2 };
export const OPERATOR = 'operator';
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{2,}$/;

/** Who performs a team action: the host's operator, or a member (identified by email) with an optional OTP. */
export type Actor = { kind: 'operator' } | { kind: 'member'; email: string; otp?: string };

export interface MemberChange {
  accountId: string;
  memberId: string;
  change: 'removed' | 'role_changed';
  /** Who made the change, as the security log names them: what follows from it is theirs too. */
  by: string;
}

/** The security log's actor for what the daemon does by itself (expiries). */
export const SYSTEM = 'system';

export interface AccountSettings {
  default_fiat?: string;
  invoice_ttl_minutes?: number;
  underpayment_tolerance_percent?: string;
  dual_approval_threshold?: string | null;
  daily_withdrawal_limit?: string | null;
  withdrawal_whitelist_enforced?: boolean;
}

export const presentAccount = (a: AccountRow) => ({
  id: a.id,
  name: a.name,
  status: a.status,
  verified: Boolean(a.verified),
  platform_fee_percent: a.platform_fee_percent,
  default_fiat: a.default_fiat,
  invoice_ttl_minutes: a.invoice_ttl_minutes,
  underpayment_tolerance_percent: a.underpayment_tolerance_percent,
  dual_approval_threshold: a.dual_approval_threshold,
  daily_withdrawal_limit: a.daily_withdrawal_limit,
  withdrawal_whitelist_enforced: Boolean(a.withdrawal_whitelist_enforced),
  created_at: a.created_at,
  updated_at: a.updated_at,
});

export const presentMember = (m: MemberRow) => ({
  id: m.id,
  account_id: m.account_id,
  email: m.email,
  role: m.role,
  status: m.status,
  created_at: m.created_at,
});

/**
 * Accounts, members, TOTP checks and the security log. Every change is one write transaction that
 * also appends its security-log row; member departures and role changes are announced to
 * listeners (keys lose what SPEC says they lose) inside the same transaction.
 */
export class TeamService {
  private readonly memberListeners: Array<(em: EntityManager, change: MemberChange) => Promise<void>> = [];
  private readonly accountListeners: Array<() => void> = [];

  constructor(
    private readonly store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
    private readonly fiats: { enabled: string[]; default: string },
  ) {}

  onMemberChange(listener: (em: EntityManager, change: MemberChange) => Promise<void>): void {
    this.memberListeners.push(listener);
  }

  /** Called after an account's state or settings changed (caches of it must be dropped). */
  onAccountChange(listener: () => void): void {
    this.accountListeners.push(listener);
  }

  /**
   * Rows of accounts were written outside this service (by SQL of an operator's or a test's): the
   * caches of accounts are dropped, as after a change made here.
   */
  changedOutside(): void {
    this.accountChanged(undefined);
  }

  private accountChanged<T>(result: T): T {
    for (const l of this.accountListeners) l();
    return result;
  }

  async createAccount(name: unknown, ownerEmail: unknown) {
    const accountName = checkName(name);
    const email = checkEmail(ownerEmail);
    const now = iso(this.clock.now());
    return this.store.write(async (em) => {
      const account: AccountRow = {
        id: newId(),
        name: accountName,
        status: 'active',
        verified: false,
        platform_fee_percent: '0',
        default_fiat: null,
        invoice_ttl_minutes: 30,
        underpayment_tolerance_percent: '0',
        dual_approval_threshold: null,
        daily_withdrawal_limit: null,
        withdrawal_whitelist_enforced: false,
        created_at: now,
        updated_at: now,
      };
      await em.insert(AccountEntity, account);
      const { member, secret } = await this.insertMember(em, account.id, email, 'owner', now, null);
      await this.log(em, account.id, OPERATOR, 'account.created', { name: accountName, owner: email });
      return {
        account: presentAccount(account),
        member: { ...presentMember(member), totp_secret: secret, otpauth_url: otpauthUrl(secret, email) },
      };
    });
  }

  async getAccount(accountId: string, em: EntityManager = this.store.read): Promise<AccountRow> {
    const a = await em.findOneBy(AccountEntity, { id: String(accountId) });
    if (!a) throw notFound('account');
    return a;
  }

  async showAccount(accountId: string) {
    const account = await this.getAccount(accountId);
    const members = await this.store.read.find(MemberEntity, {
      where: { account_id: account.id, status: 'active' },
      order: { created_at: 'ASC' },
    });
    return { account: presentAccount(account), members: members.map(presentMember) };
  }

  async listAccounts() {
    const rows = await this.store.read.find(AccountEntity, { order: { created_at: 'ASC' } });
    return rows.map(presentAccount);
  }

  async setSettings(accountId: string, actor: Actor, settings: Record<string, unknown>) {
    const patch = this.checkSettings(settings);
    return this.accountChanged(
      await this.store.write(async (em) => {
        const account = await this.getAccount(accountId, em);
        const who = await this.authorize(em, account.id, actor, { roles: ['owner', 'admin'], otp: true });
        await em.update(AccountEntity, { id: account.id }, { ...patch, updated_at: iso(this.clock.now()) });
        await this.log(em, account.id, who, 'account.settings_changed', patch);
        return presentAccount(await this.getAccount(account.id, em));
      }),
    );
  }

  async setVerified(accountId: string, verified: boolean) {
    return this.operatorUpdate(accountId, { verified }, verified ? 'account.verified' : 'account.unverified');
  }

  async setPlatformFee(accountId: string, percent: unknown) {
    const p = Amount.parse(percent, { field: 'percent', decimals: 4, allowZero: true });
    if (p.gt(Amount.of('100'))) throw validationError('percent', 'percent must be from 0 to 100');
    return this.operatorUpdate(accountId, { platform_fee_percent: p.toString() }, 'account.fee_changed');
  }

  async freeze(accountId: string, actor: Actor) {
    return this.accountChanged(
      await this.store.write(async (em) => {
        const account = await this.getAccount(accountId, em);
        const who = await this.authorize(em, account.id, actor, { roles: ROLES, otp: false });
        await em.update(AccountEntity, { id: account.id }, { status: 'frozen', updated_at: iso(this.clock.now()) });
        await this.log(em, account.id, who, 'account.frozen', {});
        return presentAccount(await this.getAccount(account.id, em));
      }),
    );
  }

  async unfreeze(accountId: string) {
    return this.operatorUpdate(accountId, { status: 'active' }, 'account.unfrozen');
  }

  async addMember(accountId: string, actor: Actor, email: unknown, role: unknown) {
    const e = checkEmail(email);
    const r = checkRole(role);
    return this.store.write(async (em) => {
      const account = await this.getAccount(accountId, em);
      const who = await this.authorize(em, account.id, actor, { roles: r === 'owner' ? ['owner'] : ['owner', 'admin'], otp: true });
      const existing = await em.findOneBy(MemberEntity, { account_id: account.id, email: e, status: 'active' });
      if (existing) throw new ApiError(409, 'conflict', `${e} is already a member`, { field: 'email' });
      const { member, secret } = await this.insertMember(em, account.id, e, r, iso(this.clock.now()), await this.grantor(em, account.id, who));
      await this.log(em, account.id, who, 'member.added', { email: e, role: r });
      return { member: { ...presentMember(member), totp_secret: secret, otpauth_url: otpauthUrl(secret, e) } };
    });
  }

  async removeMember(accountId: string, actor: Actor, email: unknown) {
    const e = checkEmail(email);
    return this.store.write(async (em) => {
      const account = await this.getAccount(accountId, em);
      const target = await this.activeMember(em, account.id, e);
      const who = await this.authorize(em, account.id, actor, { roles: target.role === 'owner' ? ['owner'] : ['owner', 'admin'], otp: true });
      await this.keepAnOwner(em, account.id, target);
      await em.update(MemberEntity, { id: target.id }, { status: 'removed', updated_at: iso(this.clock.now()) });
      await this.log(em, account.id, who, 'member.removed', { email: e, role: target.role });
      for (const l of this.memberListeners) await l(em, { accountId: account.id, memberId: target.id, change: 'removed', by: who });
      return { member: presentMember({ ...target, status: 'removed' }) };
    });
  }

  async setRole(accountId: string, actor: Actor, email: unknown, role: unknown) {
    const e = checkEmail(email);
    const r = checkRole(role);
    return this.store.write(async (em) => {
      const account = await this.getAccount(accountId, em);
      const target = await this.activeMember(em, account.id, e);
      const needsOwner = target.role === 'owner' || r === 'owner';
      const who = await this.authorize(em, account.id, actor, { roles: needsOwner ? ['owner'] : ['owner', 'admin'], otp: true });
      if (target.role === r) return { member: presentMember(target) };
      if (target.role === 'owner') await this.keepAnOwner(em, account.id, target);
      const now = iso(this.clock.now());
      const grant = RANK[r] > RANK[target.role] ? { role_granted_at: now, role_granted_by: await this.grantor(em, account.id, who) } : {};
      await em.update(MemberEntity, { id: target.id }, { role: r, ...grant, updated_at: now });
      await this.log(em, account.id, who, 'member.role_changed', { email: e, from: target.role, to: r });
      for (const l of this.memberListeners) await l(em, { accountId: account.id, memberId: target.id, change: 'role_changed', by: who });
      return { member: presentMember({ ...target, role: r }) };
    });
  }

  async securityLog(accountId: string, limit = 100) {
    const account = await this.getAccount(accountId);
    const rows = await this.store.read.find(SecurityLogEntity, {
      where: { account_id: account.id },
      order: { created_at: 'DESC', id: 'DESC' },
      take: Math.min(Math.max(limit, 1), 1000),
    });
    return rows.map((r) => ({ id: r.id, actor: r.actor, action: r.action, details: JSON.parse(r.details) as unknown, created_at: r.created_at }));
  }

  /**
   * Checks that the actor may act on the account: the operator always; a member when active, of one
   * of `roles`, and (when `otp`) with a fresh TOTP code, each accepted once. Returns the actor's
   * name for the security log.
   */
  async authorize(em: EntityManager, accountId: string, actor: Actor, need: { roles: readonly Role[]; otp: boolean }): Promise<string> {
    if (actor.kind === 'operator') return OPERATOR;
    const member = await em.findOneBy(MemberEntity, { account_id: accountId, email: String(actor.email).toLowerCase(), status: 'active' });
    if (!member) throw new ApiError(403, 'forbidden', `${actor.email} is not a member of this account`);
    if (!need.roles.includes(member.role)) {
      throw new ApiError(403, 'forbidden', `this needs the role ${need.roles.join(' or ')}`, { required: need.roles });
    }
    if (need.otp) await this.consumeOtp(em, member, actor.otp);
    return member.email;
  }

  async memberByEmail(em: EntityManager, accountId: string, email: string): Promise<MemberRow> {
    return this.activeMember(em, accountId, checkEmail(email));
  }

  /** A code is accepted once: its step must be later than the last accepted step (guarded update). */
  private async consumeOtp(em: EntityManager, member: MemberRow, code: string | undefined): Promise<void> {
    if (code === undefined || code === '') throw validationError('otp', 'a two-factor code is required (--otp)');
    const secret = this.sealer.open(member.totp_secret_sealed, cells.memberTotp(member.id));
    const step = matchTotpStep(secret, String(code), this.clock.now());
    if (step === null) throw new ApiError(403, 'forbidden', 'the two-factor code is not valid', { field: 'otp' });
    const res = await em
      .createQueryBuilder()
      .update(MemberEntity)
      .set({ totp_last_step: step })
      .where('id = :id AND (totp_last_step IS NULL OR totp_last_step < :step)', { id: member.id, step })
      .execute();
    if (!res.affected) throw new ApiError(403, 'forbidden', 'the two-factor code was already used', { field: 'otp' });
  }

  /** `grantedBy`: the member who adds them, null for the operator. */
  private async insertMember(em: EntityManager, accountId: string, email: string, role: Role, now: string, grantedBy: string | null) {
    const secret = newTotpSecret();
    const id = newId();
    const member: MemberRow = {
      id,
      account_id: accountId,
      email,
      role,
      status: 'active',
      totp_secret_sealed: this.sealer.seal(secret, cells.memberTotp(id)),
      totp_last_step: null,
      role_granted_at: now,
      role_granted_by: grantedBy,
      created_at: now,
      updated_at: now,
    };
    await em.insert(MemberEntity, member);
    return { member, secret };
  }

  /** Who grants a role, as `role_granted_by` records it: the acting member's id, or null for the operator. */
  private async grantor(em: EntityManager, accountId: string, who: string): Promise<string | null> {
    return who === OPERATOR ? null : (await this.activeMember(em, accountId, who)).id;
  }

  private async activeMember(em: EntityManager, accountId: string, email: string): Promise<MemberRow> {
    const m = await em.findOneBy(MemberEntity, { account_id: accountId, email, status: 'active' });
    if (!m) throw notFound('member');
    return m;
  }

  private async keepAnOwner(em: EntityManager, accountId: string, target: MemberRow): Promise<void> {
    if (target.role !== 'owner') return;
    const owners = await em.countBy(MemberEntity, { account_id: accountId, role: 'owner', status: 'active' });
    if (owners <= 1) throw new ApiError(409, 'conflict', 'an account keeps at least one owner', { reason: 'last_owner' });
  }

  private async operatorUpdate(accountId: string, patch: Partial<AccountRow>, action: string) {
    return this.accountChanged(
      await this.store.write(async (em) => {
        const account = await this.getAccount(accountId, em);
        await em.update(AccountEntity, { id: account.id }, { ...patch, updated_at: iso(this.clock.now()) });
        await this.log(em, account.id, OPERATOR, action, patch);
        return presentAccount(await this.getAccount(account.id, em));
      }),
    );
  }

  /** Appends to the security log. Callers pass only non-secret details. */
  async log(em: EntityManager, accountId: string, actor: string, action: string, details: object): Promise<void> {
    await em.insert(SecurityLogEntity, {
      id: newId(),
      account_id: accountId,
      actor,
      action,
      details: JSON.stringify(details),
      created_at: iso(this.clock.now()),
    });
  }

  private checkSettings(s: Record<string, unknown>): AccountSettings {
    const out: AccountSettings = {};
    const known = [
      'default_fiat',
      'invoice_ttl_minutes',
      'underpayment_tolerance_percent',
      'dual_approval_threshold',
      'daily_withdrawal_limit',
      'withdrawal_whitelist_enforced',
    ];
    for (const k of Object.keys(s)) if (!known.includes(k)) throw validationError(k, `unknown setting ${k}`);
    if (Object.keys(s).length === 0) throw validationError('settings', 'name at least one setting');
    if (s.default_fiat !== undefined) {
      if (typeof s.default_fiat !== 'string' || !this.fiats.enabled.includes(s.default_fiat))
        throw validationError('default_fiat', `default_fiat must be one of ${this.fiats.enabled.join(', ')}`);
      out.default_fiat = s.default_fiat;
    }
    if (s.invoice_ttl_minutes !== undefined) {
      const n = Number(s.invoice_ttl_minutes);
      if (!Number.isInteger(n) || n < 1 || n > 2880 || !/^\d+$/.test(String(s.invoice_ttl_minutes)))
        throw validationError('invoice_ttl_minutes', 'invoice_ttl_minutes must be an integer from 1 to 2880');
      out.invoice_ttl_minutes = n;
    }
    if (s.underpayment_tolerance_percent !== undefined) {
      const p = Amount.parse(String(s.underpayment_tolerance_percent), { field: 'underpayment_tolerance_percent', decimals: 4, allowZero: true });
      if (p.gt(Amount.of('100'))) throw validationError('underpayment_tolerance_percent', 'must be from 0 to 100');
      out.underpayment_tolerance_percent = p.toString();
    }
    for (const k of ['dual_approval_threshold', 'daily_withdrawal_limit'] as const) {
      const v = s[k];
      if (v !== undefined) out[k] = v === null || v === 'none' ? null : Amount.parse(String(v), { field: k, decimals: 2 }).toString();
    }
    if (s.withdrawal_whitelist_enforced !== undefined) {
      const v = s.withdrawal_whitelist_enforced;
      if (v !== true && v !== false && v !== 'true' && v !== 'false') throw validationError('withdrawal_whitelist_enforced', 'must be true or false');
      out.withdrawal_whitelist_enforced = v === true || v === 'true';
    }
    return out;
  }
}

function checkEmail(v: unknown): string {
  if (typeof v !== 'string' || v.length > 254 || !EMAIL_RE.test(v)) throw validationError('email', 'a valid email is required');
  return v.toLowerCase();
}

function checkName(v: unknown): string {
  if (typeof v !== 'string' || v.trim().length === 0 || v.length > 200 || /[\u0000-\u001f]/.test(v))
    throw validationError('name', 'name must be 1 to 200 printable characters');
  return v.trim();
}

function checkRole(v: unknown): Role {
  if (typeof v !== 'string' || !ROLES.includes(v as Role)) throw validationError('role', `role must be one of ${ROLES.join(', ')}`);
  return v as Role;
}
