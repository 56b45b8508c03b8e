import { authOf } from '../auth/auth.middleware';
import { normalizeIp } from '../auth/ip-match';
import type { KeyService } from '../auth/key.service';
import { refusalToApiError } from '../auth/withdraw-permission';
import type { WithdrawalRow } from '../db/entities/withdrawals';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { pathId } from '../http/path-id';
import { fieldColumns, listHandler, type ExportableList } from '../http/export';
import { idempotencyKeyOf } from '../http/idempotency';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { withdrawalApi } from './withdrawal.api';
import { parseWithdrawalFilters, type WithdrawalFilters } from './withdrawal.query';
import type { WithdrawalService } from './withdrawal.service';
import type { WithdrawalView } from './withdrawal.view';

export interface WithdrawalRouteDeps {
  withdrawals: WithdrawalService;
  keys: Pick<KeyService, 'payoutDecision' | 'exactAccount'>;
  /** The auth and Idempotency-Key guards `mount` builds each route's from (its declaration says which). */
  guards: RouteGuards;
  clock: Clock;
  logger: Logger;
}

/** The withdrawal endpoints of SPEC: estimate, create, cancel, list (and its exports), get. */
export function withdrawalRoutes(deps: WithdrawalRouteDeps): AppRouter {
  const r = newRouter();
  const { withdrawals } = deps;
  const idOf = (raw: string | undefined) => pathId(raw, 'withdrawal');

  // PRODUCT §5: the estimate needs read or withdraw.
  mount(r, withdrawalApi.estimate, deps.guards, async (ctx) => {
    ctx.body = await withdrawals.estimate(authOf(ctx).accountId, ctx.state.body);
  });

  // Idempotency-Keys of withdrawals are bound by the service, per merchant and for good (SPEC 7–10),
  // in the transaction that creates the withdrawal: not by the per-key middleware.
  mount(r, withdrawalApi.create, deps.guards, async (ctx) => {
    const auth = authOf(ctx);
    const decision = await deps.keys.payoutDecision(auth, auth.usedSecret);
    if (!decision.allowed) throw refusalToApiError(decision);
    const key = idempotencyKeyOf(ctx);
    const caller = {
      accountId: auth.accountId,
      apiKeyId: auth.apiKeyId,
      limits: { key: auth.apiKeyId, ip: normalizeIp(ctx.ip) },
      account: deps.keys.exactAccount(auth),
    };
    const { withdrawal, created, replayed } = await withdrawals.create(caller, ctx.state.body, key);
    ctx.status = created ? 201 : 200;
    ctx.body = withdrawal;
    if (replayed) ctx.set('Idempotent-Replayed', 'true');
  });

  const list: ExportableList<WithdrawalFilters, WithdrawalView, WithdrawalRow> = {
    name: 'withdrawals',
    columns: fieldColumns(FIELDS),
    parseFilters: parseWithdrawalFilters,
    source: withdrawals,
  };
  mount(r, withdrawalApi.list, deps.guards, listHandler(list, deps));

  mount(r, withdrawalApi.get, deps.guards, async (ctx) => {
    ctx.body = await withdrawals.get(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, withdrawalApi.cancel, deps.guards, async (ctx) => {
    ctx.body = await withdrawals.cancel(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  return r;
}

/** The columns of a withdrawal export: the JSON fields, in the same order. */
const FIELDS = [
  'id',
  'status',
  'payout_id',
  'coin_id',
  'ticker',
  'network',
  'amount',
  'to_address',
  'comment',
  'review_reason',
  'txid',
  'confirmations',
  'failure_reason',
  'platform_fee',
  'network_fee_reserved',
  'network_fee_charged',
  'network_fee_mode',
  'total_debit',
  'created_at',
  'updated_at',
  'completed_at',
] as const satisfies ReadonlyArray<keyof WithdrawalView>;
