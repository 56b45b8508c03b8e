/**
 * Schemas of the API's shapes (zod): request bodies are checked against them at the edge, responses
 * and events are declared with them, and the OpenAPI document is generated from them, so the
 * document and the checks are one source.
 */
import { z } from 'zod';
import { validationError } from './errors';

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
const DECIMAL_PATTERN = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** A UUID (the same pattern as isUuid). */
export const uuid = () => z.string().regex(UUID_PATTERN).meta({ format: 'uuid' });
/** An amount: a decimal string, never a number or exponent notation. */
export const decimal = () => z.string().regex(DECIMAL_PATTERN).meta({ description: 'decimal string' });
/** An RFC 3339 UTC time. */
export const timestamp = () => z.string().meta({ format: 'date-time' });

/** SPEC's keyset page: `{items, next_cursor}`. */
export const pageOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), next_cursor: z.string().nullable() });

/** SPEC's error envelope. */
export const ErrorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});

/** Whether two types are the same (a view type kept beside its schema is checked against it at compile time). */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Checks a JSON body against a request schema; the first problem is SPEC's validation_error naming
 * the field (`details.field`): an unknown field first, then the fields in the schema's order.
 */
export function checkShape<S extends z.ZodType>(schema: S, body: Record<string, unknown>, what: string): z.infer<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') {
    const k = unknown.keys[0]!;
    throw validationError(k, `${k} is not a field of ${what}`);
  }
  const issue = issues[0]!;
  const field = issue.path.length > 0 ? String(issue.path[0]) : 'body';
  const absent = issue.path.length === 1 && (body[field] === undefined || body[field] === null);
  throw validationError(
    field,
    absent && issue.code === 'invalid_type' ? `${field} is required` : `${issue.path.join('.') || 'body'}: ${lowerFirst(issue.message)}`,
  );
}

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** The query parameters of every keyset list (SPEC "Pagination"). */
export const pageQuery = {
  limit: z.number().int().min(1).max(100).optional().meta({ description: 'page size, 20 by default' }),
  cursor: z.string().max(400).optional().meta({ description: 'next_cursor of the previous page, with the same filters' }),
};
/** `?format=` of an exportable list. */
export const exportQuery = { format: z.enum(['csv', 'xlsx']).optional().meta({ description: 'stream the whole filtered list as a file' }) };
