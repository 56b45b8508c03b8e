import type { ParsedUrlQuery } from 'node:querystring';
import { authOf } from '../auth/auth.middleware';
import { normalizeIp } from '../auth/ip-match';
import type { KeyService } from '../auth/key.service';
import { refusalToApiError } from '../auth/withdraw-permission';
import type { RefundRow } from '../db/entities/refund';
import { fieldColumns, listHandler, type ExportableList } from '../http/export';
import { mount, newRouter, type AppContext, type AppRouter, type RouteGuards } from '../http/context';
import { pathId } from '../http/path-id';
import type { Clock } from '../shared/clock';
import { validationError } from '../shared/errors';
import type { Logger } from '../shared/logger';
import { queryEnum, queryString, queryUuid } from '../shared/query';
import { refundApi } from './refund.api';
import type { RefundFilters } from './refund.request';
import type { RefundCaller, RefundService } from './refund.service';
import { strayApi } from '../strays/stray.api';
import { REFUND_STATUSES } from './refund.state';
import type { RefundView } from './refund.view';

export interface RefundRouteDeps {
  refunds: RefundService;
  keys: Pick<KeyService, 'payoutDecision'>;
  guards: RouteGuards;
  clock: Clock;
  logger: Logger;
}

export function parseRefundFilters(q: ParsedUrlQuery): RefundFilters {
  const refundId = queryString(q, 'refund_id');
  if (refundId !== undefined && (refundId.length === 0 || refundId.length > 128)) throw validationError('refund_id', 'refund_id must be 1 to 128 characters');
  return { status: queryEnum(q, 'status', REFUND_STATUSES), invoice_id: queryUuid(q, 'invoice_id'), refund_id: refundId };
}

/** POST /v1/refunds, GET /v1/refunds (and its exports), GET /v1/refunds/{id}, POST /v1/refunds/{id}/cancel, POST /v1/strays/{id}/refund. */
export function refundRoutes(deps: RefundRouteDeps): AppRouter {
  const r = newRouter();
  const { refunds } = deps;
  const idOf = (raw: string | undefined) => pathId(raw, 'refund');

  // The key's withdraw status decides, as for a withdrawal; the refund is created on its behalf.
  const callerOf = async (ctx: AppContext): Promise<RefundCaller> => {
    const auth = authOf(ctx);
    const decision = await deps.keys.payoutDecision(auth, auth.usedSecret);
    if (!decision.allowed) throw refusalToApiError(decision);
    return { accountId: auth.accountId, apiKeyId: auth.apiKeyId, limits: { key: auth.apiKeyId, ip: normalizeIp(ctx.ip) } };
  };

  mount(r, refundApi.create, deps.guards, async (ctx) => {
    const { refund, created } = await refunds.create(await callerOf(ctx), ctx.state.body);
    ctx.status = created ? 201 : 200;
    ctx.body = refund;
  });

  mount(r, strayApi.refund, deps.guards, async (ctx) => {
    const { refund, created } = await refunds.refundStray(await callerOf(ctx), pathId(ctx.params.id, 'stray payment'), ctx.state.body);
    ctx.status = created ? 201 : 200;
    ctx.body = refund;
  });

  const list: ExportableList<RefundFilters, RefundView, RefundRow> = {
    name: 'refunds',
    columns: fieldColumns(FIELDS),
    parseFilters: parseRefundFilters,
    source: refunds,
  };
  mount(r, refundApi.list, deps.guards, listHandler(list, deps));

  mount(r, refundApi.get, deps.guards, async (ctx) => {
    ctx.body = await refunds.get(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, refundApi.cancel, deps.guards, async (ctx) => {
    ctx.body = await refunds.cancel(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  return r;
}

/** The columns of a refund export: the JSON fields but the payer link (a bearer secret kept out of files), in order. */
const FIELDS = [
  'id',
  'status',
  'refund_id',
  'invoice_id',
  'transaction_id',
  'coin_id',
  'ticker',
  'network',
  'amount',
  'to_address',
  'network_fee_paid_by',
  'withdrawal_id',
  'txid',
  'failure_reason',
  'expires_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof RefundView>;
