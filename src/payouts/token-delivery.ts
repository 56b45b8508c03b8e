import { NATIVE_ASSET, type Catalog } from '../catalog/coins';
import { deliveredBy, sentFrom, type TransferLog } from '../chains/token-transfer';
import { Amount } from '../shared/amount';

/** A token transfer the wallet sent: the coin, the sender, the payee and the amount (base units), as a send row keeps them. */
export interface SentTokenTransfer {
  coin_id: string;
  from_address: string;
  to_address: string;
  amount: string;
}

/** A mined token transfer that did not deliver: why, in the merchant's words, and what left the sender all the same (base units). */
export interface Undelivered {
  reason: string;
  left: bigint;
}

/**
 * Why a mined token transfer of the wallet's did not do what it was sent for, or null when it did
 * (PRODUCT §14): it is done only when its `Transfer` logs show the whole amount reaching the payee
 * from the sender; a token that returns false moves nothing, one that takes a fee on transfer
 * delivers less, though the whole amount left the sender (`left`). A native coin's transfer has no
 * log to read: null. `digits`: the family's address as 40 lower-case hex digits.
 */
export function undelivered(
  catalog: Catalog,
  sent: SentTokenTransfer,
  transfers: readonly TransferLog[],
  digits: (address: string) => string,
): Undelivered | null {
  const coin = catalog.coin(sent.coin_id);
  if (!coin || coin.asset === NATIVE_ASSET) return null;
  const want = BigInt(sent.amount);
  const contract = digits(coin.asset);
  const from = digits(sent.from_address);
  const got = deliveredBy(transfers, { contract, from, to: digits(sent.to_address) });
  if (got === want) return null;
  const left = sentFrom(transfers, { contract, from });
  const show = (v: bigint) => Amount.fromBaseUnits(v, coin.decimals).toString();
  const taken = left > 0n ? `; the ${show(left)} ${coin.ticker} that left the wallet and its network fee are charged` : '; the chain took its network fee';
  return {
    reason: `the transaction was mined, but the ${coin.ticker} contract's Transfer logs show ${show(got)} of ${show(want)} ${coin.ticker} reaching ${sent.to_address} (a token that returns false or takes a fee on transfer)${taken}`,
    left,
  };
}
