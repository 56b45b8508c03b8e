import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import { CustodyRuleEntity, type CustodyRuleRow } from '../db/entities/custody';
import type { AccountRow } from '../db/entities/team';
import type { WithdrawalRow } from '../db/entities/withdrawals';
import { insertRowIfAbsent, placeholder, rawQuery, updateRows } from '../db/raw';
import type { Store } from '../db/store';
import type { MoneyMovement } from '../money/money-movement';
import { Amount } from '../shared/amount';
import { iso, type Clock } from '../shared/clock';
import { ApiError, notFound, validationError } from '../shared/errors';
import { newTimeOrderedId } from '../shared/ids';
import type { Logger } from '../shared/logger';
import type { Actor, TeamService } from '../team/team.service';
import { authorizePayoutAddressChange, type WhitelistDeps } from '../withdrawals/whitelist.service';
import { SECURITY_WINDOW_MS, type WithdrawalService } from '../withdrawals/withdrawal.service';
import { isCancellable } from '../withdrawals/withdrawal.state';
import { CLOSED_FORWARD, forwardDecision, forwardPayoutId, sumAmounts, type ForwardDecision } from './custody-decision';

export interface CustodyDeps {
  store: Store;
  catalog: Catalog;
  withdrawals: WithdrawalService;
  money: MoneyMovement;
  team: TeamService;
  /** The sensitive-operation limiter (a change of a cold address counts as a whitelist change does). */
  limit: WhitelistDeps['limit'];
  clock: Clock;
  logger: Logger;
}

/** A rule as `coinkeep custody list` shows it. */
export interface CustodyRuleView {
  id: string;
  coin_id: string;
  ticker: string | null;
  address: string;
  keep: string;
  /** From when the address is used (its setting plus the security-change window). */
  effective_at: string;
  /** The address is still inside the security-change window: nothing is forwarded yet. */
  waiting: boolean;
  address_set_by: string;
  address_set_at: string;
  /** The rule's last forward (its withdrawal), if any: the next is made once this one completed, failed or was refused. */
  last_withdrawal_id: string | null;
  /** What the account's completed cold-storage forwards of the coin sent, in all. */
  forwarded: string;
  created_at: string;
}

/** What one run did with one rule. */
export type ForwardOutcome = { ruleId: string; withdrawalId: string } | { ruleId: string; skipped: string };

/**
 * Cold storage (PRODUCT §18): per account and coin, the merchant's cold address and what stays
 * hot (`keep`). Owners and admins set and remove rules with a two-factor code (the whitelist's
 * path: sensitive-operation limits, the security log); setting or changing the address is a
 * security change, and the address is used only once the security-change window has passed. The
 * forwarding job withdraws the excess over `keep` to the address as an ordinary withdrawal, one at
 * a time per rule, under a payout_id naming the run.
 */
export class CustodyService {
  constructor(private readonly deps: CustodyDeps) {
    // A forward's address was chosen by whoever set it: not the second person who approves it.
    deps.withdrawals.followCustody(async (em, w) => (await em.findOneBy(CustodyRuleEntity, { id: w.api_key_id }))?.address_set_by ?? null);
  }

  async list(accountId: string, actor: Actor): Promise<CustodyRuleView[]> {
    const em = this.deps.store.read;
    await this.deps.team.authorize(em, accountId, actor, { roles: ['owner', 'admin', 'developer'], otp: false });
    const rules = await em.find(CustodyRuleEntity, { where: { account_id: accountId, status: 'active' }, order: { created_at: 'ASC' } });
    const cold = await this.coldTotals(em, accountId);
    return rules.map((r) => this.present(r, cold.get(r.coin_id) ?? Amount.zero()));
  }

  /**
   * Sets an account's rule for a coin (`coinkeep custody set`): a new address, or a changed one,
   * is a security change used after the window (a forward still cancellable to the old address is
   * cancelled: the old address is not used after the change); a changed `keep` alone applies at once.
   */
  async set(accountId: string, actor: Actor, body: { coin_id?: unknown; address?: unknown; keep?: unknown }): Promise<CustodyRuleView> {
    const payout = this.deps.withdrawals.payoutCoin(body.coin_id);
    if (typeof body.address !== 'string') throw validationError('address', 'address must be a string');
    const address = body.address;
    this.deps.withdrawals.checkDestination(payout, address);
    const keep = Amount.parse(body.keep, { field: 'keep', decimals: payout.coin.decimals, allowZero: true });
    return this.deps.store.write(async (em) => {
      const who = await authorizePayoutAddressChange(this.deps, em, accountId, actor, 'cold storage');
      const now = this.deps.clock.now();
      const at = iso(now);
      const effective = iso(new Date(now.getTime() + SECURITY_WINDOW_MS));
      const rule = await em.findOneBy(CustodyRuleEntity, { account_id: accountId, coin_id: payout.coin.id, status: 'active' });
      let next: CustodyRuleRow;
      if (!rule) {
        next = {
          id: newTimeOrderedId(now.getTime()),
          account_id: accountId,
          coin_id: payout.coin.id,
          address,
          keep: keep.toString(),
          status: 'active',
          address_set_by: who,
          address_set_at: at,
          effective_at: effective,
          forwards: 0,
          last_withdrawal_id: null,
          created_at: at,
          updated_at: at,
          removed_at: null,
        };
        if (!(await insertRowIfAbsent(em, 'custody_rules', next))) throw new ApiError(409, 'conflict', 'the rule changed meanwhile; try again');
        await this.deps.team.log(em, accountId, who, 'custody.address_set', {
          rule_id: next.id,
          coin_id: next.coin_id,
          address,
          keep: next.keep,
          effective_at: effective,
        });
      } else if (rule.address === address) {
        next = { ...rule, keep: keep.toString(), updated_at: at };
        await this.guardedUpdate(em, rule, { keep: next.keep, updated_at: at });
        await this.deps.team.log(em, accountId, who, 'custody.keep_changed', { rule_id: rule.id, coin_id: rule.coin_id, keep_was: rule.keep, keep: next.keep });
      } else {
        const patch = { address, keep: keep.toString(), address_set_by: who, address_set_at: at, effective_at: effective, updated_at: at };
        next = { ...rule, ...patch };
        await this.guardedUpdate(em, rule, patch);
        await this.cancelOpenForward(em, rule);
        await this.deps.team.log(em, accountId, who, 'custody.address_set', {
          rule_id: rule.id,
          coin_id: rule.coin_id,
          address,
          address_was: rule.address,
          keep: next.keep,
          effective_at: effective,
        });
      }
      const fresh = (await em.findOneBy(CustodyRuleEntity, { id: next.id })) ?? next;
      return this.present(fresh, (await this.coldTotals(em, accountId)).get(fresh.coin_id) ?? Amount.zero());
    });
  }

  /** Removes an account's rule for a coin (`coinkeep custody remove`): nothing more is forwarded; a forward still cancellable is cancelled. */
  async remove(accountId: string, actor: Actor, body: { coin_id?: unknown }): Promise<{ id: string; coin_id: string; removed: true }> {
    const payout = this.deps.withdrawals.payoutCoin(body.coin_id);
    return this.deps.store.write(async (em) => {
      const who = await authorizePayoutAddressChange(this.deps, em, accountId, actor, 'cold storage');
      const rule = await em.findOneBy(CustodyRuleEntity, { account_id: accountId, coin_id: payout.coin.id, status: 'active' });
      if (!rule) throw notFound('cold storage rule');
      const at = iso(this.deps.clock.now());
      await this.guardedUpdate(em, rule, { status: 'removed', removed_at: at, updated_at: at });
      await this.cancelOpenForward(em, rule);
      await this.deps.team.log(em, accountId, who, 'custody.removed', { rule_id: rule.id, coin_id: rule.coin_id, address: rule.address });
      return { id: rule.id, coin_id: rule.coin_id, removed: true };
    });
  }

  /** A rule's row changed by `patch`, guarded by what was read (409 when it changed meanwhile). */
  private async guardedUpdate(em: EntityManager, rule: CustodyRuleRow, patch: Partial<CustodyRuleRow>): Promise<void> {
    const n = await updateRows(em, 'custody_rules', patch, { id: rule.id, status: 'active', forwards: rule.forwards, address: rule.address });
    if (n !== 1) throw new ApiError(409, 'conflict', 'the rule changed meanwhile; try again');
  }

  /** The rule's forward, cancelled when it has not reached processing yet (its money returns to available). */
  private async cancelOpenForward(em: EntityManager, rule: CustodyRuleRow): Promise<void> {
    if (!rule.last_withdrawal_id) return;
    const [w] = await rawQuery<Pick<WithdrawalRow, 'status'>>(em, `SELECT status FROM withdrawals WHERE id = ${placeholder(em, 1)}`, [rule.last_withdrawal_id]);
    if (w && isCancellable(w.status)) await this.deps.withdrawals.cancelWithin(em, rule.account_id, rule.last_withdrawal_id);
  }

  /** Per coin, what an account's completed cold-storage forwards sent (the dashboard's cold amount). */
  async coldTotals(em: EntityManager, accountId: string): Promise<Map<string, Amount>> {
    const rows = await rawQuery<{ coin_id: string; amount: string }>(
      em,
      `SELECT w.coin_id AS coin_id, w.amount AS amount FROM custody_forwards f JOIN withdrawals w ON w.id = f.withdrawal_id
       WHERE f.account_id = ${placeholder(em, 1)} AND w.status = 'completed'`,
      [accountId],
    );
    const byCoin = new Map<string, string[]>();
    for (const r of rows) byCoin.set(r.coin_id, [...(byCoin.get(r.coin_id) ?? []), r.amount]);
    return new Map([...byCoin].map(([coin, amounts]) => [coin, sumAmounts(amounts)]));
  }

  /** The coins an account has an active rule for. */
  async ruleCoins(em: EntityManager, accountId: string): Promise<Set<string>> {
    const rows = await rawQuery<{ coin_id: string }>(em, `SELECT coin_id FROM custody_rules WHERE account_id = ${placeholder(em, 1)} AND status = 'active'`, [
      accountId,
    ]);
    return new Set(rows.map((r) => r.coin_id));
  }

  /**
   * The forwarding job's run: every active rule whose address is past the window, in turn. A rule
   * that cannot forward now (a fee not priced, a refusal) is logged and tried again next run.
   */
  async run(signal?: AbortSignal): Promise<ForwardOutcome[]> {
    const em = this.deps.store.read;
    const rules = await rawQuery<CustodyRuleRow>(
      em,
      `SELECT * FROM custody_rules WHERE status = 'active' AND effective_at <= ${placeholder(em, 1)} ORDER BY created_at, id`,
      [iso(this.deps.clock.now())],
    );
    const outcomes: ForwardOutcome[] = [];
    for (const rule of rules) {
      if (signal?.aborted) break;
      try {
        outcomes.push(await this.forward(rule));
      } catch (err) {
        const code = err instanceof ApiError ? err.code : 'error';
        this.deps.logger.warn('cold storage forward not made', {
          account_id: rule.account_id,
          coin_id: rule.coin_id,
          code,
          error: err instanceof Error ? err.message : String(err),
        });
        outcomes.push({ ruleId: rule.id, skipped: code });
      }
    }
    return outcomes;
  }

  /** One rule's forward, if due: priced outside any transaction (the fee quote may ask the node), then created with every check again inside it. */
  private async forward(rule: CustodyRuleRow): Promise<ForwardOutcome> {
    const read = this.deps.store.read;
    const decision = await this.decide(read, rule);
    if (!decision.forward) return { ruleId: rule.id, skipped: decision.reason };
    const priced = await this.deps.withdrawals.priceWithin(rule.account_id, rule.coin_id, rule.address, decision.budget);
    if (!priced) return { ruleId: rule.id, skipped: 'below_minimum' };
    const seq = rule.forwards + 1;
    const row = await this.deps.withdrawals.createForCustody({
      accountId: rule.account_id,
      ruleId: rule.id,
      coinId: rule.coin_id,
      toAddress: rule.address,
      payoutId: forwardPayoutId(rule.id, seq),
      amount: priced.amount,
      fees: priced.fees,
      due: async (em, totalDebit) => {
        // The rule as the run read it (not changed, removed or forwarded by another run meanwhile).
        const now = await em.findOneBy(CustodyRuleEntity, { id: rule.id });
        if (!now || now.status !== 'active' || now.address !== rule.address || now.forwards !== rule.forwards || now.keep !== rule.keep) return false;
        // Its account and balance now: `keep` is still left once the whole debit is taken.
        const again = await this.decide(em, now);
        return again.forward && totalDebit.lte(again.budget);
      },
      record: async (em, w) => {
        const at = iso(this.deps.clock.now());
        const forward = { rule_id: rule.id, seq, account_id: rule.account_id, coin_id: rule.coin_id, withdrawal_id: w.id, created_at: at };
        if (!(await insertRowIfAbsent(em, 'custody_forwards', forward))) return false;
        const n = await updateRows(
          em,
          'custody_rules',
          { forwards: seq, last_withdrawal_id: w.id, updated_at: at },
          { id: rule.id, status: 'active', forwards: rule.forwards, address: rule.address },
        );
        return n === 1;
      },
    });
    if (!row) return { ruleId: rule.id, skipped: 'made_by_another_run' };
    this.deps.logger.info('cold storage forward made', { account_id: rule.account_id, coin_id: rule.coin_id, withdrawal_id: row.id, amount: row.amount });
    return { ruleId: rule.id, withdrawalId: row.id };
  }

  /** The pure decision (custody-decision.ts) from the rule, its account, its last forward and the balance, as `em` reads them. */
  private async decide(em: EntityManager, rule: CustodyRuleRow): Promise<ForwardDecision> {
    const p = (i: number) => placeholder(em, i);
    const [account] = await rawQuery<Pick<AccountRow, 'status' | 'verified'>>(em, `SELECT status, verified FROM accounts WHERE id = ${p(1)}`, [
      rule.account_id,
    ]);
    let openForward = false;
    if (rule.last_withdrawal_id) {
      const [w] = await rawQuery<Pick<WithdrawalRow, 'status'>>(em, `SELECT status FROM withdrawals WHERE id = ${p(1)}`, [rule.last_withdrawal_id]);
      openForward = w !== undefined && !(CLOSED_FORWARD as readonly string[]).includes(w.status);
    }
    const { available } = await this.deps.money.accountBalance(em, rule.account_id, rule.coin_id);
    return forwardDecision({
      available,
      keep: Amount.of(rule.keep),
      frozen: !account || account.status === 'frozen',
      unverified: !account || !account.verified,
      waiting: rule.effective_at > iso(this.deps.clock.now()),
      openForward,
    });
  }

  private present(r: CustodyRuleRow, forwarded: Amount): CustodyRuleView {
    return {
      id: r.id,
      coin_id: r.coin_id,
      ticker: this.deps.catalog.coin(r.coin_id)?.ticker ?? null,
      address: r.address,
      keep: r.keep,
      effective_at: r.effective_at,
      waiting: r.effective_at > iso(this.deps.clock.now()),
      address_set_by: r.address_set_by,
      address_set_at: r.address_set_at,
      last_withdrawal_id: r.last_withdrawal_id,
      forwarded: forwarded.toString(),
      created_at: r.created_at,
    };
  }
}
