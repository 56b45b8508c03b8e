import { Amount } from '../shared/amount';

/** Significant digits of an approximate amount on the payment page. */
export const APPROX_SIGNIFICANT = 4;

/**
 * An approximate amount written for people (the coin choice's "about ..."): `significant` digits
 * counted from the first non-zero one, rounded half to even, trailing zeros dropped; the whole part
 * is never rounded away ("12346", not "12350"). 0.007352941176470589 is "0.007353". Never for an
 * amount to be sent or copied: those stay exact.
 */
export function approxForPeople(amount: string, significant = APPROX_SIGNIFICANT): string {
  const value = Amount.of(amount);
  if (value.isZero()) return '0';
  const [whole = '0', fraction = ''] = value.toString().replace(/^-/, '').split('.');
  const places = whole === '0' ? fraction.length - fraction.replace(/^0+/, '').length + significant : Math.max(0, significant - whole.length);
  return value.round(places, 'half_even').toString();
}
