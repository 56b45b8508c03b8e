/**
 * How a static-address `search` is matched (docs/invoices.md, "Static addresses"), as pure decisions; the
 * service runs the reads they ask for. Shorter than a trigram: a prefix of the address, the customer
 * id or the label, each a range on its own per-account index. From a trigram on: a substring of any
 * of them. On PostgreSQL `LIKE` uses the pg_trgm indexes (when the extension could be created) and
 * the planner chooses. On SQLite the FTS5 trigram table is first asked which rows hold the text's
 * last TAIL characters, up to FEW_ROWS of them: each trigram of a phrase costs the index a read of
 * its posting list (a whole 42-character address, 40 trigrams, took 9 ms at 1,000,000 addresses;
 * its last 8 characters, 1.5 ms), and identifiers share their beginnings ("0x", "cust-") more than
 * their ends. When at most FEW_ROWS rows hold the tail, those rows are read by rowid and tested for
 * the whole text. Otherwise the text is common, or its tail is: when at least DENSE_MATCHES of the
 * account's PROBE_ROWS newest addresses hold the text, its rows are read newest first and tested (a
 * page fills after a few rows, where the index would read a posting list of most rows); else the
 * index answers which rows hold the whole text.
 */

/** Characters of a trigram: the shortest search text a trigram index answers. */
export const TRIGRAM = 3;
/** SQLite: the characters at the end of a search text first looked up in the trigram index (6 trigrams). */
export const TAIL = 8;
/** SQLite: up to this many rows holding the text's tail are read by rowid (about a tenth of what the probe reads). */
export const FEW_ROWS = 200;
/** SQLite: how many of the account's newest addresses tell whether a search text is common, and how many of them must hold it. */
export const PROBE_ROWS = 2000;
export const DENSE_MATCHES = 50;

export type SearchPlan = { kind: 'none' } | { kind: 'prefix' | 'like' | 'index' | 'scan'; text: string } | { kind: 'rows'; text: string; rowids: number[] };

/** A plan, or (SQLite, a text of a trigram or more) the FTS5 phrase of its tail to look up first. */
export function searchStart(search: string | undefined, dialect: 'sqlite' | 'postgres'): SearchPlan | { kind: 'tail'; text: string; phrase: string } {
  if (search === undefined) return { kind: 'none' };
  const chars = [...search];
  if (chars.length < TRIGRAM) return { kind: 'prefix', text: search };
  if (dialect === 'postgres') return { kind: 'like', text: search };
  return { kind: 'tail', text: search, phrase: phrase(chars.slice(-TAIL).join('')) };
}

/** The rows holding the tail (read up to FEW_ROWS + 1): few enough are read by rowid; null when the probe must decide. */
export function planFromTail(text: string, rowids: number[]): SearchPlan | null {
  return rowids.length <= FEW_ROWS ? { kind: 'rows', text, rowids } : null;
}

/** How many of the account's newest PROBE_ROWS addresses hold the text (counted up to DENSE_MATCHES): common text is scanned, rare text asked of the index. */
export function planFromProbe(text: string, matches: number): SearchPlan {
  return matches >= DENSE_MATCHES ? { kind: 'scan', text } : { kind: 'index', text };
}

/** FTS5 query of the exact text as one phrase (a substring, with the trigram tokenizer). */
export const phrase = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/** A `LIKE` pattern matching the text anywhere, its own `%`, `_` and `\` taken literally (ESCAPE '\'). */
export const likeAnywhere = (text: string): string => `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
