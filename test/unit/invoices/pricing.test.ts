/**
 * PRODUCT §6: the price locked when an invoice's coin is known. SPEC "POST /v1/invoices" rule 4:
 * fiat pricing needs a fresh rate.
 */
import test from 'ava';
import { priceInvoice, type PricingTerms } from '../../../src/invoices/pricing';
import { ApiError, unavailable } from '../../../src/shared/errors';
import { Amount } from '../../../src/shared/amount';

const BTC = { ticker: 'BTC', decimals: 8 };
const USD = { code: 'USD', decimals: 2, invoice_enabled: true };
const JPY = { code: 'JPY', decimals: 0, invoice_enabled: true };
const terms = (over: Partial<PricingTerms> = {}): PricingTerms => ({ amount: Amount.of('100'), currency: 'USD', fiat: true, feePaidBy: 'merchant', ...over });
const rates = (table: Record<string, string>) => (ticker: string, fiat: string) => {
  const r = table[`${ticker}/${fiat}`];
  if (r === undefined) throw unavailable('no fresh rate');
  return r;
};

test("a fiat amount is amount / rate rounded up to the coin's decimals, so the merchant never gets less; the rate is locked", (t) => {
  t.deepEqual(priceInvoice(terms(), BTC, '0', rates({ 'BTC/USD': '30000' }), undefined), {
    amountCrypto: '0.00333334',
    payerAmount: '0.00333334',
    amountFiat: '100',
    fiatCurrency: 'USD',
    rate: '30000',
  });
});

test('fiat pricing without a fresh rate is refused: 503 unavailable (SPEC rule 4)', (t) => {
  const err = t.throws(() => priceInvoice(terms(), BTC, '0', rates({}), undefined), { instanceOf: ApiError }) as ApiError;
  t.is(err.status, 503);
});

test("the payer pays the platform fee: payer_amount = amount_crypto + the fee rounded up to the coin's decimals", (t) => {
  const p = priceInvoice(terms({ feePaidBy: 'payer' }), BTC, '1', rates({ 'BTC/USD': '30000' }), undefined);
  t.is(p.amountCrypto, '0.00333334');
  t.is(p.payerAmount, '0.00336668', '0.00333334 + 1 % (0.0000333334) rounded up to 0.00003334');
  t.is(priceInvoice(terms(), BTC, '1', rates({ 'BTC/USD': '30000' }), undefined).payerAmount, '0.00333334', 'the merchant pays: the payer sends amount_crypto');
});

test("a coin-priced invoice is its own amount, shown in the account's default fiat rounded half-even to that fiat's decimals", (t) => {
  const coinPriced = terms({ amount: Amount.of('0.5'), currency: 'BTC', fiat: false });
  t.deepEqual(priceInvoice(coinPriced, BTC, '0', rates({ 'BTC/USD': '30000.005' }), USD), {
    amountCrypto: '0.5',
    payerAmount: '0.5',
    amountFiat: '15000',
    fiatCurrency: 'USD',
    rate: '30000.005',
  });
  t.is(priceInvoice(terms({ amount: Amount.of('0.00001'), currency: 'BTC', fiat: false }), BTC, '0', rates({ 'BTC/JPY': '4500000' }), JPY).amountFiat, '45');
});

test('a coin-priced invoice never fails for want of a rate: it shows no fiat value', (t) => {
  const coinPriced = terms({ amount: Amount.of('0.5'), currency: 'BTC', fiat: false });
  t.like(priceInvoice(coinPriced, BTC, '0', rates({}), USD), { amountCrypto: '0.5', amountFiat: null, fiatCurrency: null, rate: null });
  t.like(priceInvoice(coinPriced, BTC, '0', rates({ 'BTC/USD': '1' }), undefined), { amountFiat: null, rate: null }, 'no default fiat: nothing to show');
});

test("a failure that is not the rate engine's answer still surfaces", (t) => {
  const coinPriced = terms({ amount: Amount.of('0.5'), currency: 'BTC', fiat: false });
  t.throws(
    () =>
      priceInvoice(
        coinPriced,
        BTC,
        '0',
        () => {
          throw new TypeError('bug');
        },
        USD,
      ),
    { instanceOf: TypeError },
  );
});
