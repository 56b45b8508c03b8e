import { Amount } from '../shared/amount';

/**
 * The `failure_reason` of a withdrawal the account's coins on chain cannot fund while nothing that
 * could bring them is on its way (PRODUCT §14): what is missing, in `ticker`'s units.
 */
export function notFunded(missingBaseUnits: bigint, decimals: number, ticker: string): string {
  return `cannot be funded on chain: the account's coins there are ${Amount.fromBaseUnits(missingBaseUnits, decimals).toString()} ${ticker} short of what its payout needs`;
}
