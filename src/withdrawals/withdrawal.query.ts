import type { ParsedUrlQuery } from 'node:querystring';
import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import { WithdrawalEntity, type WithdrawalRow, type WithdrawalStatus } from '../db/entities/withdrawals';
import { validationError } from '../shared/errors';
import { queryEnum, queryString, queryTime, queryUuid } from '../shared/query';
import { WITHDRAWAL_STATUSES } from './withdrawal.state';

/** The filters of GET /v1/withdrawals (and of its CSV/XLSX export). */
export interface WithdrawalFilters {
  status?: WithdrawalStatus;
  coin_id?: string;
  payout_id?: string;
  /** Inclusive, normalised RFC 3339 UTC. */
  created_from?: string;
  /** Exclusive. */
  created_to?: string;
}

export function parseWithdrawalFilters(q: ParsedUrlQuery): WithdrawalFilters {
  const coinId = queryUuid(q, 'coin_id');
  const f: WithdrawalFilters = {
    status: queryEnum(q, 'status', WITHDRAWAL_STATUSES),
    coin_id: coinId,
    payout_id: queryString(q, 'payout_id'),
    created_from: queryTime(q, 'created_from'),
    created_to: queryTime(q, 'created_to'),
  };
  if (f.payout_id !== undefined && (f.payout_id.length === 0 || f.payout_id.length > 128))
    throw validationError('payout_id', 'payout_id must be 1 to 128 characters');
  return f;
}

/** One account's withdrawals matching the filters, newest first, unlimited (pages and exports add their own bounds). */
export function listWithdrawalsQuery(em: EntityManager, accountId: string, f: WithdrawalFilters): SelectQueryBuilder<WithdrawalRow> {
  const qb = em.createQueryBuilder(WithdrawalEntity, 'w').where('w.account_id = :accountId', { accountId });
  if (f.status !== undefined) qb.andWhere('w.status = :status', { status: f.status });
  if (f.coin_id !== undefined) qb.andWhere('w.coin_id = :coinId', { coinId: f.coin_id });
  if (f.payout_id !== undefined) qb.andWhere('w.payout_id = :payoutId', { payoutId: f.payout_id });
  if (f.created_from !== undefined) qb.andWhere('w.created_at >= :from', { from: f.created_from });
  if (f.created_to !== undefined) qb.andWhere('w.created_at < :to', { to: f.created_to });
  return qb.orderBy('w.created_at', 'DESC').addOrderBy('w.id', 'DESC');
}
