import { Amount } from '../shared/amount';

/** The estimate's `amount` that asks for everything (PRODUCT §14 "Withdraw everything"). */
export const MAX_AMOUNT = 'max';

/** A withdrawal's fees and what it takes from `available`, in the withdrawn coin. */
export interface WithdrawalFees {
  platformFee: Amount;
  networkFee: Amount;
  total: Amount;
}

/** Fee pricings one answer tries at most (the network fee of a larger amount is priced again). */
const MAX_PRICINGS = 8;

export interface WithdrawAllRequest {
  available: Amount;
  decimals: number;
  /** The least amount one payment may carry. */
  minimum: Amount;
  /** The platform fee of an amount, as a withdrawal is charged it. */
  platformFee: (amount: Amount) => Amount;
  /** A withdrawal's fees for an amount (its network fee may grow with it: Bitcoin spends more coins). */
  feesOf: (amount: Amount) => Promise<WithdrawalFees>;
}

/**
 * The largest amount whose `total_debit` fits `available`, with its fees; null when not even the
 * minimum does. Priced from a network fee of nothing up: each try's amount is the largest whose
 * platform fee and the network fee priced before fit; when its own network fee is larger, the
 * next try leaves room for that one. The first that fits is the answer (a network fee that grows
 * with the amount only ever lowers it). Throws when the pricing does not settle.
 */
export async function largestPayable(req: WithdrawAllRequest): Promise<{ amount: Amount; fees: WithdrawalFees } | null> {
  let networkFee = Amount.zero();
  for (let i = 0; i < MAX_PRICINGS; i++) {
    const amount = largestWithin(req.available.minus(networkFee), req.decimals, req.platformFee);
    if (amount.cmp(req.minimum) < 0) return null;
    const fees = await req.feesOf(amount);
    if (fees.total.lte(req.available)) return { amount, fees };
    networkFee = fees.networkFee;
  }
  throw new Error(`the network fee of the largest amount did not settle in ${MAX_PRICINGS} pricings`);
}

/** The largest amount (in base units of `decimals`) that, with its platform fee, is at most `budget`; zero when none. */
export function largestWithin(budget: Amount, decimals: number, platformFee: (amount: Amount) => Amount): Amount {
  const fits = (units: bigint): boolean => {
    const amount = Amount.fromBaseUnits(units, decimals);
    return amount.plus(platformFee(amount)).lte(budget);
  };
  if (!budget.isPositive()) return Amount.zero();
  // The amount and its fee grow together: bisection over base units.
  let low = 0n;
  let high = budget.round(decimals, 'down').toBaseUnits(decimals);
  while (low < high) {
    const mid = (low + high + 1n) / 2n;
    if (fits(mid)) low = mid;
    else high = mid - 1n;
  }
  return Amount.fromBaseUnits(low, decimals);
}
