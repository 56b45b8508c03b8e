import Decimal from 'decimal.js';

/**
 * Decimal arithmetic of the rate engine. The precision leaves room for the exact mean of two
 * accepted rates (each at most MAX_DIGITS digits), so a median is never rounded.
 */
export const RateDecimal = Decimal.clone({ precision: 100, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -9e15, toExpPos: 9e15 });
export type RateDecimal = InstanceType<typeof RateDecimal>;

const MAX_DIGITS = 40;
const DECIMAL_RE = /^\d+(\.\d+)?$/;

export class MalformedRateError extends Error {
  constructor(what: string) {
    super(`malformed rate: ${what}`);
    this.name = 'MalformedRateError';
  }
}

/**
 * A provider's price (a decimal string or a JSON number) as a normalised positive decimal string:
 * no exponent, no trailing zeros. Anything else, zero included, is refused.
 */
export function parseRate(value: unknown): string {
  let d: RateDecimal;
  if (typeof value === 'string' && DECIMAL_RE.test(value) && value.replace('.', '').length <= MAX_DIGITS) {
    d = new RateDecimal(value);
  } else if (typeof value === 'number' && Number.isFinite(value)) {
    d = new RateDecimal(value);
  } else {
    throw new MalformedRateError(JSON.stringify(value)?.slice(0, 40) ?? typeof value);
  }
  if (!d.isPositive() || d.isZero() || d.precision(true) > MAX_DIGITS) throw new MalformedRateError(String(value).slice(0, 40));
  return d.toFixed();
}
