import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/** The position of a row in a list ordered by (created_at DESC, id DESC). */
export interface PageKey {
  created_at: string;
  id: string;
}

/** Applies a keyset page (created_at DESC, id DESC) to a query; fetches one extra row to know if more exist. */
export function applyKeyset<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  alias: string,
  page: { limit: number; after: PageKey | null },
): SelectQueryBuilder<T> {
  if (page.after) {
    qb.andWhere(`(${alias}.created_at < :ks_t OR (${alias}.created_at = :ks_t AND ${alias}.id < :ks_id))`, {
      ks_t: page.after.created_at,
      ks_id: page.after.id,
    });
  }
  return qb.orderBy(`${alias}.created_at`, 'DESC').addOrderBy(`${alias}.id`, 'DESC').limit(page.limit + 1);
}
