import type { EntityManager } from 'typeorm';
import { statementTexts } from './statement-texts';

/**
 * Plain SQL for hot paths where TypeORM costs more than the query (measured on invoice creation):
 * placeholders of the connection's dialect, booleans as SQLite stores them, and on SQLite prepared
 * statements run straight on the driver's connection.
 */
export const isPostgres = (em: EntityManager): boolean => em.connection.options.type === 'postgres';

export const placeholder = (em: EntityManager, i: number): string => (isPostgres(em) ? `$${i}` : '?');

/** SQLite's parameters: booleans as 0 and 1, the rest as they are (a copy only when one is boolean). */
function sqliteParams(params: readonly unknown[]): readonly unknown[] {
  for (let i = 0; i < params.length; i++) {
    if (typeof params[i] === 'boolean') return params.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
  }
  return params;
}

/** The little of better-sqlite3 used here (the package ships no types). */
interface SqliteStatement {
  reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}

/** Prepared statements per connection; the SQL texts of hot paths are few and fixed. */
const statements = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();
const MAX_STATEMENTS = 500;

/**
 * One statement with positional parameters; the rows it returns (none for a write without
 * RETURNING). On SQLite it runs on the driver's one shared connection, where the caller's
 * transaction (if any) is open, from a statement prepared once: TypeORM's `query` adds events,
 * logging and promise hops that cost more than these statements. Errors keep the driver's `code`.
 */
export async function rawQuery<T = Record<string, unknown>>(em: EntityManager, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  if (isPostgres(em)) return (await em.query(sql, [...params])) as T[];
  const stmt = sqliteStatement(em, sql);
  const bound = sqliteParams(params);
  if (stmt.reader) return stmt.all(bound) as T[];
  stmt.run(bound);
  return [];
}

/** An UPDATE or DELETE with RETURNING in the caller's transaction; the rows it returns. */
export async function returning<T>(em: EntityManager, sql: string, params: readonly unknown[]): Promise<T[]> {
  if (!isPostgres(em)) return rawQuery<T>(em, sql, params);
  // PostgreSQL answers an UPDATE as [rows, count] unless asked for the structured result.
  const result = await em.queryRunner!.query(sql, [...params], true);
  return (result.records ?? []) as T[];
}

/** A write statement (no RETURNING) as `rawQuery` runs it; the number of rows it changed. */
export async function rawRun(em: EntityManager, sql: string, params: readonly unknown[] = []): Promise<number> {
  if (isPostgres(em)) {
    // TypeORM's EntityManager.query answers an UPDATE without its count; the runner's structured result has it.
    const runner = em.queryRunner ?? em.connection.createQueryRunner();
    try {
      return (await runner.query(sql, [...params], true)).affected ?? 0;
    } finally {
      if (runner !== em.queryRunner) await runner.release();
    }
  }
  return sqliteStatement(em, sql).run(sqliteParams(params)).changes;
}

function sqliteStatement(em: EntityManager, sql: string): SqliteStatement {
  const conn = (em.connection.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
  let cache = statements.get(conn);
  if (!cache || cache.size > MAX_STATEMENTS) statements.set(conn, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) cache.set(sql, (stmt = conn.prepare(sql)));
  return stmt;
}

/** INSERT of one row whose keys are the table's column names. */
export async function insertRow(em: EntityManager, table: string, row: object): Promise<void> {
  await rawQuery(em, insertSql(em, table, Object.keys(row), 1, 'fail'), Object.values(row));
}

/**
 * `insertRow` that does nothing when the row would break a unique index; whether it inserted. A
 * unique index is then the guard of a create, as `status = ?` is of an update.
 */
export async function insertRowIfAbsent(em: EntityManager, table: string, row: object): Promise<boolean> {
  return (await rawRun(em, insertSql(em, table, Object.keys(row), 1, 'ignore'), Object.values(row))) === 1;
}

/** Rows a multi-row INSERT takes at most (SQLite allows 32,766 parameters a statement). */
const ROWS_PER_INSERT = 100;

/**
 * INSERT of several rows with the same keys (the table's column names), up to ROWS_PER_INSERT a
 * statement. With `upsertOn` (a unique key's columns), a row whose key exists replaces that row's
 * other columns instead.
 */
export async function insertRows(em: EntityManager, table: string, rows: readonly object[], opts: { upsertOn?: readonly string[] } = {}): Promise<void> {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const onConflict: OnConflict = opts.upsertOn ? { update: opts.upsertOn } : 'fail';
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    const n = Math.min(ROWS_PER_INSERT, rows.length - i);
    const params: unknown[] = new Array(n * cols.length);
    for (let r = 0; r < n; r++) {
      const row = rows[i + r] as Record<string, unknown>;
      for (let c = 0; c < cols.length; c++) params[r * cols.length + c] = row[cols[c]!];
    }
    await rawRun(em, insertSql(em, table, cols, n, onConflict), params);
  }
}

/**
 * What an INSERT does with a row that would break a unique index: fail, leave the row out
 * (`ignore`), or replace the other columns of the row holding its key (`update` on the key's columns).
 */
type OnConflict = 'fail' | 'ignore' | { update: readonly string[] };
const NO_COLUMNS: readonly string[] = [];

/** INSERT of `rows` rows of `cols` into `table`, a conflicting row handled as `onConflict` says. */
function insertSql(em: EntityManager, table: string, cols: readonly string[], rows: number, onConflict: OnConflict): string {
  const on = typeof onConflict === 'string' ? null : onConflict.update;
  return statementTexts(em).shaped(`INSERT INTO ${table} ${rows} ${on ? 'update' : onConflict}`, cols, on ?? NO_COLUMNS, () => {
    const values = Array.from({ length: rows }, (_, r) => `(${cols.map((_, i) => placeholder(em, r * cols.length + i + 1)).join(', ')})`).join(', ');
    const tail = on
      ? ` ON CONFLICT (${on.map((c) => `"${c}"`).join(', ')}) DO UPDATE SET ${cols
          .filter((c) => !on.includes(c))
          .map((c) => `"${c}" = excluded."${c}"`)
          .join(', ')}`
      : onConflict === 'ignore'
        ? ' ON CONFLICT DO NOTHING'
        : '';
    return `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES ${values}${tail}`;
  });
}

/**
 * UPDATE of `table` setting the keys of `set` (its column names) on the rows whose columns equal
 * every value of `where` (none of them null); the number of rows changed. For a guarded update
 * (`{ id, status }`), 0 means another change came first.
 */
export async function updateRows(em: EntityManager, table: string, set: object, where: object): Promise<number> {
  const cols = Object.keys(set);
  const keys = Object.keys(where);
  const sql = statementTexts(em).shaped(`UPDATE ${table}`, cols, keys, () => {
    const assign = cols.map((c, i) => `"${c}" = ${placeholder(em, i + 1)}`).join(', ');
    const match = keys.map((c, i) => `"${c}" = ${placeholder(em, cols.length + i + 1)}`).join(' AND ');
    return `UPDATE ${table} SET ${assign} WHERE ${match}`;
  });
  return rawRun(em, sql, [...Object.values(set), ...Object.values(where)]);
}

/**
 * `IN (...)` over `values` with placeholders from `first` on, the list padded to the next power of
 * two by repeating its last value (the same rows match): lists of any length share a few SQL
 * texts, so their prepared statements stay few.
 */
export function inList(em: EntityManager, values: readonly unknown[], first: number): { sql: string; params: unknown[] } {
  if (values.length === 0) throw new Error('inList of no values');
  let size = 1;
  while (size < values.length) size *= 2;
  const params = [...values];
  while (params.length < size) params.push(values[values.length - 1]);
  return { sql: `IN (${params.map((_, i) => placeholder(em, first + i)).join(', ')})`, params };
}

/**
 * Locks one row of `table` until the caller's transaction ends, so checks that read other rows
 * (a count, a limit) hold against concurrent transactions. PostgreSQL only: SQLite's write
 * transactions already take turns.
 */
export async function lockRow(em: EntityManager, table: string, id: string): Promise<void> {
  if (isPostgres(em)) await em.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
}

/** Whether a statement failed on a unique index or primary key (either dialect). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  const code = e.driverError?.code ?? e.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
