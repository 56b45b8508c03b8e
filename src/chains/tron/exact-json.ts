import { randomBytes } from 'node:crypto';

/**
 * An integer literal beyond Number's exact range, outside any string: the string alternative comes
 * first so that digits inside strings (block ids, hex data) are skipped whole; the lookbehind keeps
 * the match at the start of a number token, the lookahead refuses fractions and exponents.
 */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|(?<![\w.+-])-?\d{16,}(?![\d.eE])/g;

/** What a big integer literal starts like; it may also match inside a string (then TOKENS decides). */
const MAYBE_BIG = /[:,[]\s*-?\d{16}/;

/**
 * JSON.parse of a java-tron answer with every integer beyond 2^53 read exactly, as a bigint
 * (java-tron prints int64 fields such as a TransferContract's `amount` or an account's `balance`
 * as bare numbers; JSON.parse would round them). Every other value is JSON.parse's own. Such
 * integers are rare: only an answer that holds one pays for the reviver.
 */
export function parseExactJson(text: string): unknown {
  // A number token follows `:`, `,` or `[`: without one of 16 digits or more there, nothing to mark (java-tron's hex strings hold neither).
  if (!MAYBE_BIG.test(text)) return JSON.parse(text);
  let marker: string | null = null;
  const marked = text.replace(TOKENS, (token) => {
    if (token.charCodeAt(0) === 34 /* " */ || Number.isSafeInteger(Number(token))) return token;
    // A fresh marker per answer: a node cannot write a string that reads as one of our big numbers.
    marker ??= `\u0000big:${randomBytes(8).toString('hex')}:`;
    return JSON.stringify(marker + token);
  });
  if (marker === null) return JSON.parse(text);
  const prefix: string = marker;
  return JSON.parse(marked, (_key, value: unknown) => (typeof value === 'string' && value.startsWith(prefix) ? BigInt(value.slice(prefix.length)) : value));
}

/** A non-negative integer field as java-tron prints it: a safe number, or a bigint from parseExactJson; null when it is neither. */
export function exactInteger(value: unknown): bigint | null {
  if (typeof value === 'bigint') return value >= 0n ? value : null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return null;
}
