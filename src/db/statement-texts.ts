import type { DataSource, EntityManager } from 'typeorm';

/** The SQL text of one statement's shape: its columns set (or inserted) and matched. */
interface Shape {
  cols: readonly string[];
  keys: readonly string[];
  sql: string;
}

/**
 * The SQL texts of a data source's statements, each built once per shape: a statement over many
 * rows or columns is long, and building it anew (and hashing the new string to find its prepared
 * statement) cost more than some of the statements themselves (docs/benchmarks.md: a transfer's
 * row, a batch of webhook deliveries). One per data source, so two stores (SQLite and PostgreSQL
 * in one process, as tests run) never share a dialect's text.
 */
export class StatementTexts {
  private readonly shapes = new Map<string, Shape[]>();
  private readonly sized = new Map<string, Map<number, string>>();

  /**
   * The text `build` makes for `statement` over these column lists. A table is written in a few
   * shapes, each over and over: comparing the columns with the shapes known costs less than
   * joining them into a key each time.
   */
  shaped(statement: string, cols: readonly string[], keys: readonly string[], build: () => string): string {
    let known = this.shapes.get(statement);
    if (!known) this.shapes.set(statement, (known = []));
    for (const shape of known) if (sameNames(shape.cols, cols) && sameNames(shape.keys, keys)) return shape.sql;
    const sql = build();
    known.push({ cols, keys, sql });
    return sql;
  }

  /** The text of a statement whose shape is `site` with `n` rows or values. */
  ofSize(site: string, n: number, build: () => string): string {
    let bySize = this.sized.get(site);
    if (!bySize) this.sized.set(site, (bySize = new Map()));
    let sql = bySize.get(n);
    if (sql === undefined) bySize.set(n, (sql = build()));
    return sql;
  }
}

const owned = new WeakMap<DataSource, StatementTexts>();

/** The statement texts of the data source `em` works on. */
export function statementTexts(em: EntityManager): StatementTexts {
  let texts = owned.get(em.connection);
  if (!texts) owned.set(em.connection, (texts = new StatementTexts()));
  return texts;
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
