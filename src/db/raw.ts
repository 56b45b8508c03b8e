import type { EntityManager } from 'typeorm';

/**
 * Plain SQL for hot paths where TypeORM's query building costs more than the query (measured on
 * invoice creation): placeholders of the connection's dialect, booleans as SQLite stores them.
 */
const sqlCache = new Map<string, string>();

const isPostgres = (em: EntityManager): boolean => em.connection.options.type === 'postgres';

export const placeholder = (em: EntityManager, i: number): string => (isPostgres(em) ? `$${i}` : '?');

const bind = (em: EntityManager, v: unknown): unknown => (typeof v === 'boolean' && !isPostgres(em) ? (v ? 1 : 0) : v);

/** INSERT of one row whose keys are the table's column names. */
export async function insertRow(em: EntityManager, table: string, row: object): Promise<void> {
  const cols = Object.keys(row);
  const key = `${em.connection.options.type}\u0000${table}\u0000${cols.join(',')}`;
  let sql = sqlCache.get(key);
  if (sql === undefined) {
    sql = `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((_, i) => placeholder(em, i + 1)).join(', ')})`;
    sqlCache.set(key, sql);
  }
  await em.query(sql, Object.values(row).map((v) => bind(em, v)));
}
