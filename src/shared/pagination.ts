import { createHash } from 'node:crypto';
import type { ParsedUrlQuery } from 'node:querystring';
import { validationError } from './errors';
import { queryString } from './query';

/**
 * Keyset pagination over (created_at DESC, id DESC). The cursor is opaque: the last row's key plus a
 * digest of the filters it was issued for, so a cursor replayed with other filters is refused.
 * Rows inserted between requests can neither shift nor repeat a page.
 * A PageKey is the position of a row in that order.
 */
export interface PageKey {
  created_at: string;
  id: string;
}

export interface PageRequest {
  limit: number;
  after: PageKey | null;
  filterDigest: string;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

const digestOf = (filters: Record<string, unknown>): string => {
  const canonical = JSON.stringify(
    Object.keys(filters)
      .sort()
      .filter((k) => filters[k] !== undefined && filters[k] !== null)
      .map((k) => [k, filters[k]]),
  );
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
};

export function parsePageRequest(q: ParsedUrlQuery, filters: Record<string, unknown>): PageRequest {
  const rawLimit = queryString(q, 'limit');
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== undefined) {
    if (!/^\d{1,3}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_LIMIT) {
      throw validationError('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);
    }
    limit = Number(rawLimit);
  }
  const filterDigest = digestOf(filters);
  const cursor = queryString(q, 'cursor');
  if (cursor === undefined) return { limit, after: null, filterDigest };
  const after = decodeCursor(cursor, filterDigest);
  return { limit, after, filterDigest };
}

function decodeCursor(cursor: string, filterDigest: string): PageKey {
  const bad = () => validationError('cursor', 'cursor is not valid for this list and these filters');
  if (cursor.length > 400 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed.some((x) => typeof x !== 'string')) throw bad();
  const [t, id, f] = parsed as [string, string, string];
  if (f !== filterDigest) throw bad();
  return { created_at: t, id };
}

export function encodeCursor(key: PageKey, filterDigest: string): string {
  return Buffer.from(JSON.stringify([key.created_at, key.id, filterDigest]), 'utf8').toString('base64url');
}

/** Turns `limit + 1` fetched rows into a page; the extra row only says whether more exist. */
export function toPage<R extends PageKey, T>(rows: R[], req: PageRequest, present: (row: R) => T): Page<T> {
  const more = rows.length > req.limit;
  const pageRows = more ? rows.slice(0, req.limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map(present),
    next_cursor: more && last ? encodeCursor({ created_at: last.created_at, id: last.id }, req.filterDigest) : null,
  };
}
