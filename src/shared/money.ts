/**
 * Money: the one place that parses, formats and converts amounts (ARCHITECTURE "Money").
 *
 * - An Amount is an immutable decimal value in coin (or fiat) units, never a JS `number`.
 * - Wire format (SPEC, PRODUCT §2): a decimal string, no exponent, no '+', no trailing zeros beyond
 *   what the value needs, at most 18 decimals and no more than the currency's own. `"0.10"` equals
 *   `"0.1"`.
 * - plus / minus / times are exact (done on bigint base units, never rounded). Everything that can
 *   lose digits (div, round, percent) takes an explicit number of decimals and a rounding mode.
 *
 * Rounding modes (RoundingMode), precisely:
 * - 'up'        toward +infinity (ceiling):  1.231 -> 1.24,  -1.231 -> -1.23
 * - 'down'      toward -infinity (floor):    1.239 -> 1.23,  -1.231 -> -1.24
 * - 'half_even' to nearest, ties to the even neighbour (banker's): 1.225 -> 1.22, 1.235 -> 1.24,
 *               -1.225 -> -1.22
 * For the positive amounts money almost always is, 'up' rounds away from zero and 'down' truncates.
 */
import Decimal from 'decimal.js';
import { validationError } from './errors';

/** Local clone: the global Decimal configuration is never touched. */
const D = Decimal.clone({
  precision: 60,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});
type Dec = InstanceType<typeof D>;

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

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** The value as an integer and a scale: value = n / 10^scale. */
function toScaled(d: Dec): { n: bigint; scale: number } {
  const s = d.toFixed();
  const neg = s.startsWith('-');
  const body = neg ? s.slice(1) : s;
  const dot = body.indexOf('.');
  const scale = dot < 0 ? 0 : body.length - dot - 1;
  const n = BigInt(dot < 0 ? body : body.slice(0, dot) + body.slice(dot + 1));
  return { n: neg ? -n : n, scale };
}

/** n / 10^scale as a Decimal (exact: decimal.js does not round on construction). */
function fromScaled(n: bigint, scale: number): Dec {
  const neg = n < 0n;
  let digits = (neg ? -n : n).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  }
  return new D(neg ? `-${digits}` : digits);
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

function trustedDecimal(value: string): Dec {
  if (!TRUSTED_RE.test(value)) throw new Error(`not a decimal amount: ${JSON.stringify(value)}`);
  return new D(value);
}

export class Amount {
  private readonly d: Dec;

  private constructor(d: Dec) {
    // "-0" never exists: every zero is the same positive zero.
    this.d = d.isZero() ? new D(0) : d;
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
    const d = new D(input);
    const places = d.decimalPlaces();
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
    if (d.isZero()) {
      if (!opts.allowZero) throw validationError(field, `${field} must not be zero`);
    } else if (d.isNegative() && !opts.allowNegative) {
      throw validationError(field, `${field} must not be negative`);
    }
    return new Amount(d);
  }

  /**
   * Trusted internal values (the database, config, constants). Throws a plain Error on a bad value:
   * that is a bug, not a client mistake. Numbers are accepted only as safe integers.
   */
  static of(value: string | bigint | number | Amount): Amount {
    if (value instanceof Amount) return value;
    if (typeof value === 'string') return new Amount(trustedDecimal(value));
    if (typeof value === 'bigint') return new Amount(new D(value.toString()));
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) {
        throw new Error(`Amount.of(number) takes safe integers only, got ${value}; pass a string`);
      }
      return new Amount(new D(value.toString()));
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
    return new Amount(fromScaled(units, decimals));
  }

  /** Coin units to base units. Throws if the amount has more decimals than `decimals` (a bug). */
  toBaseUnits(decimals: number): bigint {
    checkDecimals(decimals);
    const { n, scale } = toScaled(this.d);
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
    const a = toScaled(this.d);
    const b = toScaled(Amount.of(o).d);
    return new Amount(fromScaled(a.n * b.n, a.scale + b.scale));
  }

  /** this / o, rounded to `decimals` places with `mode` (exact, no intermediate rounding). */
  div(o: Amount | string, decimals: number, mode: RoundingMode): Amount {
    checkDecimals(decimals);
    checkMode(mode);
    const a = toScaled(this.d);
    const b = toScaled(Amount.of(o).d);
    if (b.n === 0n) throw new RangeError('division by zero');
    // (A/10^sa) / (B/10^sb) * 10^d = A * 10^(sb+d) / (B * 10^sa)
    const q = divRound(a.n * pow10(b.scale + decimals), b.n * pow10(a.scale), mode);
    return new Amount(fromScaled(q, decimals));
  }

  /** Rounds to `decimals` places; see the rounding modes at the top of this file. */
  round(decimals: number, mode: RoundingMode): Amount {
    checkDecimals(decimals);
    checkMode(mode);
    const { n, scale } = toScaled(this.d);
    if (scale <= decimals) return this;
    return new Amount(fromScaled(divRound(n, pow10(scale - decimals), mode), decimals));
  }

  /** this * p / 100, rounded to `decimals` places with `mode`. */
  percent(p: Amount | string, decimals: number, mode: RoundingMode): Amount {
    return this.times(p).div(HUNDRED, decimals, mode);
  }

  cmp(o: Amount): -1 | 0 | 1 {
    return this.d.cmp(o.d) as -1 | 0 | 1;
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
    return this.d.isZero();
  }
  isNegative(): boolean {
    return !this.d.isZero() && this.d.isNegative();
  }
  isPositive(): boolean {
    return !this.d.isZero() && this.d.isPositive();
  }

  /** Decimals the value needs (trailing zeros do not count). */
  decimalPlaces(): number {
    return this.d.decimalPlaces();
  }

  /** Normalised: no exponent, no trailing zeros, no '+', never "-0". */
  toString(): string {
    return this.d.isZero() ? '0' : this.d.toFixed();
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
    const a = toScaled(x.d);
    const b = toScaled(y.d);
    const scale = Math.max(a.scale, b.scale);
    return new Amount(fromScaled(op(a.n * pow10(scale - a.scale), b.n * pow10(scale - b.scale)), scale));
  }
}

const ZERO = Amount.of(0);
/** 100, for percentages. */
export const HUNDRED = Amount.of(100);
