import type { Coin, Fiat } from '../catalog/coins';
import type { FeePaidBy } from '../db/entities/money';
import { ApiError } from '../shared/errors';
import type { Amount } from '../shared/amount';

/** What the price of an invoice depends on besides the coin. */
export interface PricingTerms {
  amount: Amount;
  currency: string;
  /** The currency is a fiat code (priced through a rate) or a coin ticker. */
  fiat: boolean;
  feePaidBy: FeePaidBy;
}

export interface InvoicePrice {
  amountCrypto: string;
  payerAmount: string;
  amountFiat: string | null;
  fiatCurrency: string | null;
  rate: string | null;
}

/**
 * The price locked when an invoice's coin is known (PRODUCT §6). A fiat amount is `amount / rate`
 * rounded up to the coin's decimals, so the merchant never gets less; without a rate the invoice
 * is refused (`rate` throws 503 `unavailable`, SPEC rule 4). A coin-priced invoice shows its value
 * in `shownIn` (the account's default fiat, rounded half-even to its decimals) when a rate is at
 * hand and never fails for want of one. `payer_amount` adds the platform fee, rounded up, when the
 * payer pays it.
 */
export function priceInvoice(
  terms: PricingTerms,
  coin: Pick<Coin, 'ticker' | 'decimals'>,
  feePercent: string,
  rate: (ticker: string, fiat: string) => string,
  shownIn: Fiat | undefined,
): InvoicePrice {
  let amountCrypto: Amount;
  let amountFiat: string | null = null;
  let fiatCurrency: string | null = null;
  let locked: string | null = null;
  if (terms.fiat) {
    locked = rate(coin.ticker, terms.currency);
    amountCrypto = terms.amount.div(locked, coin.decimals, 'up');
    amountFiat = terms.amount.toString();
    fiatCurrency = terms.currency;
  } else {
    amountCrypto = terms.amount;
    if (shownIn) {
      try {
        locked = rate(coin.ticker, shownIn.code);
        amountFiat = terms.amount.times(locked).round(shownIn.decimals, 'half_even').toString();
        fiatCurrency = shownIn.code;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        locked = null;
      }
    }
  }
  const fee = amountCrypto.percent(feePercent, coin.decimals, 'up');
  const payerAmount = terms.feePaidBy === 'payer' ? amountCrypto.plus(fee) : amountCrypto;
  return { amountCrypto: amountCrypto.toString(), payerAmount: payerAmount.toString(), amountFiat, fiatCurrency, rate: locked };
}
