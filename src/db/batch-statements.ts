import type { EntityManager } from 'typeorm';
import { placeholder, rawQuery } from './raw';
import { statementTexts } from './statement-texts';

/**
 * Statements that touch many rows at once, in SQL both SQLite and PostgreSQL run: a hot path (the
 * webhook dispatcher's) does per batch what it would otherwise do per row.
 */

/** The text of a statement whose shape is `site` with `n` rows or values (the data source's StatementTexts). */
export const shaped = (em: EntityManager, site: string, n: number, build: () => string): string => statementTexts(em).ofSize(site, n, build);

/** `(p1, p2, ...)` for `n` values starting at placeholder `from`. */
export const list = (em: EntityManager, n: number, from = 1): string => Array.from({ length: n }, (_, i) => placeholder(em, from + i)).join(', ');

/** INSERT of many rows with the same keys (the table's column names), in chunks under the bound-parameter limits. */
export async function insertRows(em: EntityManager, table: string, rows: object[]): Promise<void> {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const site = `${table}(${cols.join(',')})`;
  const perChunk = Math.max(1, Math.floor(900 / cols.length));
  for (let i = 0; i < rows.length; i += perChunk) {
    const chunk = rows.slice(i, i + perChunk);
    const sql = shaped(em, site, chunk.length, () => {
      const values = chunk.map((_, r) => `(${list(em, cols.length, r * cols.length + 1)})`).join(', ');
      return `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) VALUES ${values}`;
    });
    const params: unknown[] = [];
    for (const row of chunk) for (const c of cols) params.push((row as Record<string, unknown>)[c]);
    await rawQuery(em, sql, params);
  }
}

/**
 * `UPDATE ... SET col = v.columnN ... FROM (VALUES (...), ...) AS v WHERE <match>`: one statement
 * for many rows, each with its own values (VALUES columns are named column1, column2, ... on
 * both dialects; numbers are cast, as PostgreSQL reads untyped parameters as text).
 */
export async function updateFromValues(em: EntityManager, update: string, match: string, rows: unknown[][]): Promise<void> {
  if (rows.length === 0) return;
  const width = rows[0]!.length;
  const perChunk = Math.max(1, Math.floor(900 / width));
  for (let i = 0; i < rows.length; i += perChunk) {
    const chunk = rows.slice(i, i + perChunk);
    const sql = shaped(em, `${update}\u0000${match}`, chunk.length, () => {
      const values = chunk.map((_, r) => `(${list(em, width, r * width + 1)})`).join(', ');
      return `${update} FROM (VALUES ${values}) AS v WHERE ${match}`;
    });
    await rawQuery(em, sql, chunk.flat());
  }
}
