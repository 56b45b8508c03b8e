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
    // The leading `created_at <=` gives the index a range to start from; the plain OR form made
    // SQLite scan the account's rows from the newest on every page (quadratic over an export).
    qb.andWhere(`${alias}.created_at <= :ks_t AND (${alias}.created_at < :ks_t OR ${alias}.id < :ks_id)`, {
      ks_t: page.after.created_at,
      ks_id: page.after.id,
    });
  }
  return qb.orderBy(`${alias}.created_at`, 'DESC').addOrderBy(`${alias}.id`, 'DESC').limit(page.limit + 1);
}

/**
 * Every row of a list in keyset order, read `batchSize` rows at a time (each batch a fresh query
 * after the last key), so an export never holds more than one batch. `build` returns a new query
 * with the list's filters each time; `read` may present the rows, which must carry `created_at`
 * and `id`. Between batches only the last key is kept (an iterator, not a generator: a suspended
 * generator would keep the batch it yielded alive until the next one is asked for, long enough to
 * be promoted out of the young generation while the client reads it).
 */
export function keysetBatches<R extends PageKey>(
  build: () => SelectQueryBuilder<ObjectLiteral>,
  alias: string,
  opts: { after: PageKey | null; batchSize: number; read: (qb: SelectQueryBuilder<ObjectLiteral>) => Promise<R[]> },
): AsyncIterableIterator<R[]> {
  let after = opts.after;
  let done = false;
  const end = (): IteratorResult<R[]> => {
    done = true;
    return { done: true, value: undefined };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (done) return end();
      const rows = await opts.read(applyKeyset(build(), alias, { limit: opts.batchSize - 1, after }));
      if (rows.length === 0) return end();
      if (rows.length < opts.batchSize) done = true;
      const last = rows[rows.length - 1]!;
      after = { created_at: last.created_at, id: last.id };
      return { done: false, value: rows };
    },
    async return() {
      return end();
    },
  };
}

/** How many rows a list query matches, counting no further than `cap` (cheap on a long list). */
export async function countUpTo(qb: SelectQueryBuilder<ObjectLiteral>, cap: number): Promise<number> {
  const [sql, params] = qb.select('1', 'one').orderBy().limit(cap).getQueryAndParameters();
  const rows: Array<{ n: number | string }> = await qb.connection.query(`SELECT COUNT(*) AS n FROM (${sql}) capped`, params);
  return Number(rows[0]?.n ?? 0);
}
