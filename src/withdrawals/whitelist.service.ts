import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { ChainSender } from '../chains/types';
import { WhitelistEntryEntity } from '../db/entities/withdrawals';
import { insertRowIfAbsent, updateRows } from '../db/raw';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { ApiError, conflict, notFound } from '../shared/errors';
import { newTimeOrderedId } from '../shared/ids';
import type { Actor, TeamService } from '../team/team.service';
import { addressRefused, payoutCoinOf } from './withdrawal.request';

export interface WhitelistDeps {
  store: Store;
  catalog: Catalog;
  senderOf: (chainId: string) => ChainSender | null;
  /** One of the wallet's own addresses (any account's): never a payout destination. */
  isOwnAddress: (chainId: string, address: string) => boolean;
  team: TeamService;
  /** The sensitive-operation limiter (a whitelist change counts against the person and the merchant). */
  limit: (
    subjects: Partial<Record<'key' | 'merchant' | 'person' | 'ip', string>>,
  ) => { allowed: true } | { allowed: false; scope: string; retryAfterSeconds: number };
  clock: Clock;
}

/**
 * An account's payout address whitelist (`coinkeep whitelist`): members read it; owners and admins
 * add and remove entries with a two-factor code, counted by the sensitive-operation limits and
 * written to the security log. While the account enforces it, a withdrawal is accepted, and paid
 * (the payout worker checks again), only to an active entry of its coin.
 */
export class WhitelistService {
  constructor(private readonly deps: WhitelistDeps) {}

  /** Whether `address` is an active entry of the account for `coinId`. */
  has(em: EntityManager, accountId: string, coinId: string, address: string): Promise<boolean> {
    return em.existsBy(WhitelistEntryEntity, { account_id: accountId, coin_id: coinId, address, status: 'active' });
  }

  async list(
    accountId: string,
    actor: Actor,
  ): Promise<Array<{ id: string; coin_id: string; address: string; label: string | null; created_by: string; created_at: string }>> {
    const em = this.deps.store.read;
    await this.deps.team.authorize(em, accountId, actor, { roles: ['owner', 'admin', 'developer'], otp: false });
    const rows = await em.find(WhitelistEntryEntity, { where: { account_id: accountId, status: 'active' }, order: { created_at: 'ASC' } });
    return rows.map(({ id, coin_id, address, label, created_by, created_at }) => ({ id, coin_id, address, label, created_by, created_at }));
  }

  /** Adds a payout address (owner or admin, two-factor code, sensitive-operation limits, security log). */
  async add(accountId: string, actor: Actor, body: { coin_id?: unknown; address?: unknown; label?: unknown }) {
    const payout = payoutCoinOf(body.coin_id, this.deps.catalog, this.deps.senderOf);
    if (typeof body.address !== 'string' || !payout.sender.payable(body.address) || this.deps.isOwnAddress(payout.coin.chain_id, body.address))
      throw addressRefused();
    const label = typeof body.label === 'string' && body.label.length <= 200 ? body.label : null;
    const address = body.address;
    return this.deps.store.write(async (em) => {
      const who = await this.managerAct(em, accountId, actor);
      const now = iso(this.deps.clock.now());
      const entry = {
        id: newTimeOrderedId(),
        account_id: accountId,
        coin_id: payout.coin.id,
        address,
        label,
        status: 'active' as const,
        created_by: who,
        created_at: now,
        removed_at: null,
      };
      if (!(await insertRowIfAbsent(em, 'withdrawal_whitelist', entry))) throw conflict('this address is already on the whitelist');
      await this.deps.team.log(em, accountId, who, 'whitelist.added', { id: entry.id, coin_id: entry.coin_id, address, label });
      return { id: entry.id, coin_id: entry.coin_id, address, label, created_by: who, created_at: now };
    });
  }

  async remove(accountId: string, actor: Actor, id: string): Promise<{ id: string; removed: true }> {
    return this.deps.store.write(async (em) => {
      const who = await this.managerAct(em, accountId, actor);
      const entry = await em.findOneBy(WhitelistEntryEntity, { id, account_id: accountId, status: 'active' });
      if (!entry) throw notFound('whitelist entry');
      await updateRows(em, 'withdrawal_whitelist', { status: 'removed', removed_at: iso(this.deps.clock.now()) }, { id, status: 'active' });
      await this.deps.team.log(em, accountId, who, 'whitelist.removed', { id, coin_id: entry.coin_id, address: entry.address });
      return { id, removed: true };
    });
  }

  private managerAct(em: EntityManager, accountId: string, actor: Actor): Promise<string> {
    return authorizePayoutAddressChange(this.deps, em, accountId, actor, 'whitelist');
  }
}

/**
 * Who may change where an account's payouts may go (the whitelist, a cold-storage address): an
 * owner or admin with a two-factor code, counted against the person and the merchant by the
 * sensitive-operation limits (429 `rate_limited`). The member's email, for the security log.
 */
export async function authorizePayoutAddressChange(
  deps: Pick<WhitelistDeps, 'team' | 'limit'>,
  em: EntityManager,
  accountId: string,
  actor: Actor,
  what: string,
): Promise<string> {
  const who = await deps.team.authorize(em, accountId, actor, { roles: ['owner', 'admin'], otp: true });
  const member = await deps.team.memberByEmail(em, accountId, who);
  const r = deps.limit({ person: member.id, merchant: accountId });
  if (!r.allowed)
    throw new ApiError(429, 'rate_limited', `too many ${what} changes; wait before trying again`, { scope: r.scope, retry_after: r.retryAfterSeconds });
  return who;
}
