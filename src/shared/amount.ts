/**
 * Money: the one place that parses, formats and converts amounts (ARCHITECTURE "Money").
 *
 * - An Amount is an immutable decimal value in coin (or fiat) units, never a JS `number`.
 * - Wire format (SPEC, PRODUCT §2): a decimal string, no exponent, no '+', no trailing zeros beyond
 *   what the value needs, at most 18 decimals and no more than the currency's own. `"0.10"` equals
 *   `"0.1"`.
 * - plus / minus / times are exact (done on bigint base units, never rounded). Everything that can
 *   lose digits (div, round, percent) takes an explicit number of decimals and a rounding mode.
 * - Inside, an Amount is an integer and a scale (value = n / 10^scale, no trailing zeros): every
 *   operation is bigint arithmetic, with no decimal library between a string and the next string
 *   (each withdrawal and each ledger append makes dozens of them: issue 16 §6).
 *
 * Rounding modes (RoundingMode), precisely:
 * - 'up'        toward +infinity (ceiling):  1.231 -> 1.24,  -1.231 -> -1.23
 * - 'down'      toward -infinity (floor):    1.239 -> 1.23,  -1.231 -> -1.24
 * - 'half_even' to nearest, ties to the even neighbour (banker's): 1.225 -> 1.22, 1.235 -> 1.24,
 *               -1.225 -> -1.22
 * For the positive amounts money almost always is, 'up' rounds away from zero and 'down' truncates.
 */
import { validationError } from './errors';

export type RoundingMode = 'up' | 'down' | 'half_even';

/** Most decimals any amount may have (SPEC). */
export const MAX_DECIMALS = 18;
/** Longest input string Amount.parse looks at. */
export const MAX_INPUT_LENGTH = 100;

const DECIMAL_RE = /^-?(0|[1-9]\d*)(\.\d+)?$/;
/** Trusted internal strings (Amount.of) may carry leading zeros; nothing else is relaxed. */
const TRUSTED_RE = /^-?\d+(\.\d+)?$/;

/** Syntactic check only: `-?(0|[1-9]\d*)(\.\d+)?`, no whitespace, no exponent, no '+'. */
export function isDecimalString(s: unknown): s is string {
  return typeof s === 'string' && DECIMAL_RE.test(s);
}

export interface ParseOptions {
  /** Request field name, reported as details.field on refusal. */
  field: string;
  /** Decimals the currency has; the effective limit is min(decimals, 18). */
  decimals: number;
  allowZero?: boolean;
  allowNegative?: boolean;
}

function checkDecimals(decimals: number, what = 'decimals'): void {
  if (!Number.isSafeInteger(decimals) || decimals < 0) {
    throw new RangeError(`${what} must be a non-negative integer, got ${String(decimals)}`);
  }
}

function checkMode(mode: RoundingMode): void {
  if (mode !== 'up' && mode !== 'down' && mode !== 'half_even') {
    throw new RangeError(`unknown rounding mode ${String(mode)}`);
  }
}

const POW10: bigint[] = Array.from({ length: 64 }, (_, i) => 10n ** BigInt(i));
const pow10 = (n: number): bigint => (n < POW10.length ? POW10[n]! : 10n ** BigInt(n));

/** n / 10^scale with the fraction's trailing zeros taken off (zero: 0 / 10^0). */
function normalised(n: bigint, scale: number): { n: bigint; scale: number } {
  if (n === 0n) return { n, scale: 0 };
  while (scale > 0 && n % 10n === 0n) {
    n /= 10n;
    scale--;
  }
  return { n, scale };
}

/** A decimal string already checked by one of the patterns above: its integer and scale, normalised. */
function scaledOf(s: string): { n: bigint; scale: number } {
  const dot = s.indexOf('.');
  if (dot < 0) return { n: BigInt(s), scale: 0 };
  let end = s.length;
  while (end > dot + 1 && s.charCodeAt(end - 1) === 48 /* '0' */) end--;
  const frac = s.slice(dot + 1, end);
  const n = BigInt(s.slice(0, dot) + frac);
  return n === 0n ? { n: 0n, scale: 0 } : { n, scale: frac.length };
}

/** num / den rounded to an integer with the given mode. den must not be 0. */
function divRound(num: bigint, den: bigint, mode: RoundingMode): bigint {
  if (den === 0n) throw new RangeError('division by zero');
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const q = num / den; // truncates toward zero
  const r = num % den; // sign of num
  if (r === 0n) return q;
  switch (mode) {
    case 'up':
      return r > 0n ? q + 1n : q;
    case 'down':
      return r < 0n ? q - 1n : q;
    case 'half_even': {
      const twice = 2n * (r < 0n ? -r : r);
      const away = r > 0n ? q + 1n : q - 1n;
      if (twice > den) return away;
      if (twice < den) return q;
      return q % 2n === 0n ? q : away;
    }
  }
}

function trustedScaled(value: string): { n: bigint; scale: number } {
  if (!TRUSTED_RE.test(value)) throw new Error(`not a decimal amount: ${JSON.stringify(value)}`);
  return scaledOf(value);
}

export class Amount {
  /** value = n / 10^scale; no trailing zeros in the fraction (scale 0 for zero, so "-0" never exists). */
  private readonly n: bigint;
  private readonly scale: number;

  private constructor(v: { n: bigint; scale: number }) {
    this.n = v.n;
    this.scale = v.scale;
    Object.freeze(this);
  }

  /**
   * Parses an amount from a request. Input must be a JS string matching `-?(0|[1-9]\d*)(\.\d+)?`
   * with no trimming, at most 100 characters. Decimals are counted on the value, so trailing zeros
   * do not count ("1.500" is 1.5: fine for a 2-decimal currency). Every refusal throws
   * validationError(opts.field, reason).
   */
  static parse(input: unknown, opts: ParseOptions): Amount {
    const { field } = opts;
    checkDecimals(opts.decimals, 'opts.decimals');
    if (typeof input !== 'string') {
      if (typeof input === 'number' || typeof input === 'bigint') {
        throw validationError(field, `${field} must be a decimal string (for example "12.5"), not a number`);
      }
      throw validationError(field, `${field} must be a decimal string (for example "12.5")`);
    }
    if (input.length === 0) throw validationError(field, `${field} must not be empty`);
    if (input.length > MAX_INPUT_LENGTH) {
      throw validationError(field, `${field} is too long (at most ${MAX_INPUT_LENGTH} characters)`);
    }
    if (!DECIMAL_RE.test(input)) {
      let why = 'is not a valid decimal string (for example "12.5")';
      if (/\s/.test(input)) why = 'must not contain whitespace';
      else if (/[eE]/.test(input)) why = 'must not use exponent notation';
      else if (input.startsWith('+')) why = "must not have a leading '+'";
      else if (/^-?0\d/.test(input)) why = 'must not have leading zeros';
      throw validationError(field, `${field} ${why}`);
    }
    const v = scaledOf(input);
    const places = v.scale;
    if (places > MAX_DECIMALS) {
      throw validationError(field, `${field} has more than ${MAX_DECIMALS} decimal places`);
    }
    if (places > opts.decimals) {
      throw validationError(
        field,
        opts.decimals === 0
          ? `${field} must be a whole number for this currency`
          : `${field} has more decimal places than this currency allows (${opts.decimals})`,
      );
    }
    if (v.n === 0n) {
      if (!opts.allowZero) throw validationError(field, `${field} must not be zero`);
    } else if (v.n < 0n && !opts.allowNegative) {
      throw validationError(field, `${field} must not be negative`);
    }
    return new Amount(v);
  }

  /**
   * Trusted internal values (the database, config, constants). Throws a plain Error on a bad value:
   * that is a bug, not a client mistake. Numbers are accepted only as safe integers.
   */
  static of(value: string | bigint | number | Amount): Amount {
    if (value instanceof Amount) return value;
    if (typeof value === 'string') return new Amount(trustedScaled(value));
    if (typeof value === 'bigint') return new Amount({ n: value, scale: 0 });
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) {
        throw new Error(`Amount.of(number) takes safe integers only, got ${value}; pass a string`);
      }
      return new Amount({ n: BigInt(value), scale: 0 });
    }
    throw new Error(`Amount.of: unsupported value of type ${typeof value}`);
  }

  static zero(): Amount {
    return ZERO;
  }

  /** Base units (satoshi, wei, cents) to coin units: fromBaseUnits(150n, 2) is 1.5. */
  static fromBaseUnits(units: bigint, decimals: number): Amount {
    if (typeof units !== 'bigint') throw new TypeError('fromBaseUnits takes a bigint');
    checkDecimals(decimals);
    return new Amount(normalised(units, decimals));
  }

  /** Coin units to base units. Throws if the amount has more decimals than `decimals` (a bug). */
  toBaseUnits(decimals: number): bigint {
    checkDecimals(decimals);
    const { n, scale } = this;
    if (scale > decimals) {
      throw new Error(`amount ${this.toString()} has more than ${decimals} decimals; round it first`);
    }
    return n * pow10(decimals - scale);
  }

  plus(o: Amount): Amount {
    return Amount.exact(this, o, (a, b) => a + b);
  }

  minus(o: Amount): Amount {
    return Amount.exact(this, o, (a, b) => a - b);
  }

  /** Exact product; no rounding ever. */
  times(o: Amount | string): Amount {
    const b = Amount.of(o);
    return new Amount(normalised(this.n * b.n, this.scale + b.scale));
  }

  /** this / o, rounded to `decimals` places with `mode` (exact, no intermediate rounding). */
  div(o: Amount | string, decimals: number, mode: RoundingMode): Amount {
    checkDecimals(decimals);
    checkMode(mode);
    const b = Amount.of(o);
    if (b.n === 0n) throw new RangeError('division by zero');
    // (A/10^sa) / (B/10^sb) * 10^d = A * 10^(sb+d) / (B * 10^sa)
    const q = divRound(this.n * pow10(b.scale + decimals), b.n * pow10(this.scale), mode);
    return new Amount(normalised(q, decimals));
  }

  /** Rounds to `decimals` places; see the rounding modes at the top of this file. */
  round(decimals: number, mode: RoundingMode): Amount {
    checkDecimals(decimals);
    checkMode(mode);
    const { n, scale } = this;
    if (scale <= decimals) return this;
    return new Amount(normalised(divRound(n, pow10(scale - decimals), mode), decimals));
  }

  /** this * p / 100, rounded to `decimals` places with `mode`. */
  percent(p: Amount | string, decimals: number, mode: RoundingMode): Amount {
    return this.times(p).div(HUNDRED, decimals, mode);
  }

  cmp(o: Amount): -1 | 0 | 1 {
    const scale = Math.max(this.scale, o.scale);
    const a = this.n * pow10(scale - this.scale);
    const b = o.n * pow10(scale - o.scale);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  eq(o: Amount): boolean {
    return this.cmp(o) === 0;
  }
  gt(o: Amount): boolean {
    return this.cmp(o) > 0;
  }
  gte(o: Amount): boolean {
    return this.cmp(o) >= 0;
  }
  lt(o: Amount): boolean {
    return this.cmp(o) < 0;
  }
  lte(o: Amount): boolean {
    return this.cmp(o) <= 0;
  }

  isZero(): boolean {
    return this.n === 0n;
  }
  isNegative(): boolean {
    return this.n < 0n;
  }
  isPositive(): boolean {
    return this.n > 0n;
  }

  /** Decimals the value needs (trailing zeros do not count). */
  decimalPlaces(): number {
    return this.scale;
  }

  /** Normalised: no exponent, no trailing zeros, no '+', never "-0". */
  toString(): string {
    const { n, scale } = this;
    if (scale === 0) return n.toString();
    const neg = n < 0n;
    const digits = (neg ? -n : n).toString().padStart(scale + 1, '0');
    const cut = digits.length - scale;
    return `${neg ? '-' : ''}${digits.slice(0, cut)}.${digits.slice(cut)}`;
  }

  toJSON(): string {
    return this.toString();
  }

  /** `${amount}` and 'x' + amount give the string; +amount and amount < other throw (use cmp). */
  [Symbol.toPrimitive](hint: string): string {
    if (hint === 'number') throw new TypeError('Amount is not a number; use its methods');
    return this.toString();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Amount(${this.toString()})`;
  }

  private static exact(x: Amount, y: Amount, op: (a: bigint, b: bigint) => bigint): Amount {
    const scale = Math.max(x.scale, y.scale);
    return new Amount(normalised(op(x.n * pow10(scale - x.scale), y.n * pow10(scale - y.scale)), scale));
  }
}

const ZERO = Amount.of(0);
/** 100, for percentages. */
export const HUNDRED = Amount.of(100);
