import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { WhereClause } from 'typeorm/query-builder/WhereClause';
import type { PageKey } from '../shared/pagination';

export type { PageKey };

/**
 * Applies a keyset page (created_at DESC, id DESC) to a query; fetches one extra row to know if more
 * exist. Call it last: the cursor's bound goes before the query's own conditions.
 */
export function applyKeyset<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  alias: string,
  page: { limit: number; after: PageKey | null },
): SelectQueryBuilder<T> {
  if (page.after) {
    // The leading `created_at <=` gives the index a range to start from; the plain OR form made
    // SQLite scan the account's rows from the newest on every page (quadratic over an export).
    // It comes first, before the list's filters: of two upper bounds on created_at (this and a
    // `to` filter) SQLite ranges the index on the first, and from `to` it walked past every row
    // before the cursor again on each page (docs/benchmarks.md, exports).
    const bound: WhereClause = { type: 'simple', condition: `${alias}.created_at <= :ks_t AND (${alias}.created_at < :ks_t OR ${alias}.id < :ks_id)` };
    const own = qb.expressionMap.wheres;
    qb.expressionMap.wheres = own.length > 0 ? [bound, { type: 'and', condition: own }] : [bound];
    qb.setParameters({ ks_t: page.after.created_at, ks_id: page.after.id });
  }
  return qb
    .orderBy(`${alias}.created_at`, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .limit(page.limit + 1);
}

/**
 * Every row of a list in keyset order, read `batchSize` rows at a time (each batch a fresh query
 * after the last key), so an export never holds more than one batch. `build` returns a new query
 * with the list's filters each time; `keyOf` gives a row's `created_at` and `id`. Between batches
 * only the last key is kept (an iterator, not a generator: a suspended
 * generator would keep the batch it yielded alive until the next one is asked for, long enough to
 * be promoted out of the young generation while the client reads it).
 */
export function keysetBatches<R>(
  build: () => SelectQueryBuilder<ObjectLiteral>,
  alias: string,
  opts: {
    after: PageKey | null;
    batchSize: number;
    read: (qb: SelectQueryBuilder<ObjectLiteral>) => Promise<R[]>;
    keyOf: (row: R) => PageKey;
  },
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
      after = opts.keyOf(rows[rows.length - 1]!);
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
