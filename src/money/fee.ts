import type { FeePaidBy } from '../db/entities/money';
import { Amount, HUNDRED } from '../shared/amount';

/** The platform fee an incoming transfer is credited with: the percentage and who pays it. */
export interface FeeTerms {
  percent: string;
  paidBy: FeePaidBy;
}

/**
 * The platform fee of one incoming transfer (PRODUCT §6). The merchant pays it: the fee is the
 * percentage of the gross, rounded up. The payer pays it: the gross already carries it, so the
 * merchant keeps gross × 100 / (100 + p) rounded down, which is at least an invoice's
 * `amount_crypto` for an exact payment of its `payer_amount`.
 */
export function feeOf(gross: Amount, terms: FeeTerms, decimals: number): { fee: Amount; net: Amount } {
  const p = Amount.of(terms.percent);
  if (!p.isPositive()) return { fee: Amount.zero(), net: gross };
  if (terms.paidBy === 'payer') {
    const net = gross.times(HUNDRED).div(HUNDRED.plus(p), decimals, 'down');
    return { fee: gross.minus(net), net };
  }
  const fee = gross.percent(p, decimals, 'up');
  return { fee, net: gross.minus(fee) };
}
