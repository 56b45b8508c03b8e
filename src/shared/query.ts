import type { ParsedUrlQuery } from 'node:querystring';
import { validationError } from './errors';
import { isUuid } from './ids';

/**
 * A query parameter that must appear at most once, without the NUL character (as a body's strings:
 * PostgreSQL cannot compare text with one, so a filter holding it would fail its query).
 */
export function queryString(q: ParsedUrlQuery, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw validationError(name, `${name} must be given once`);
  if (v.includes('\u0000')) throw validationError(name, `${name} must not contain the NUL character (U+0000)`);
  return v;
}

/** A UUID parameter (an id to filter by), lower-cased. */
export function queryUuid(q: ParsedUrlQuery, name: string): string | undefined {
  const v = queryString(q, name);
  if (v !== undefined && !isUuid(v)) throw validationError(name, `${name} must be a UUID`);
  return v?.toLowerCase();
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time parameter, normalised to the stored form (UTC, milliseconds). */
export function queryTime(q: ParsedUrlQuery, name: string): string | undefined {
  const v = queryString(q, name);
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (!RFC3339.test(v) || Number.isNaN(d.getTime())) throw validationError(name, `${name} must be an RFC 3339 time`);
  return d.toISOString();
}

export function queryEnum<T extends string>(q: ParsedUrlQuery, name: string, options: readonly T[]): T | undefined {
  const v = queryString(q, name);
  if (v === undefined) return undefined;
  if (!options.includes(v as T)) throw validationError(name, `${name} must be one of ${options.join(', ')}`);
  return v as T;
}
