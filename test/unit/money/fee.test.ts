/**
 * PRODUCT §6: every confirmed transfer is credited less the platform fee; who pays it decides how
 * the gross splits.
 */
import test from 'ava';
import { feeOf } from '../../../src/money/fee';
import { Amount } from '../../../src/shared/amount';

const split = (gross: string, percent: string, paidBy: 'merchant' | 'payer', decimals = 8) => {
  const { fee, net } = feeOf(Amount.of(gross), { percent, paidBy }, decimals);
  return { fee: fee.toString(), net: net.toString() };
};

test('without a platform fee the merchant is credited the whole transfer', (t) => {
  t.deepEqual(split('1.5', '0', 'merchant'), { fee: '0', net: '1.5' });
  t.deepEqual(split('1.5', '0', 'payer'), { fee: '0', net: '1.5' });
});

test("the merchant pays: the fee is the percentage of the transfer rounded up to the coin's decimals, the rest is credited", (t) => {
  t.deepEqual(split('100', '1.5', 'merchant'), { fee: '1.5', net: '98.5' });
  t.deepEqual(split('0.00000001', '1', 'merchant'), { fee: '0.00000001', net: '0' }, 'the smallest unit still pays a fee: rounded up');
  t.deepEqual(split('1', '0.333', 'merchant', 2), { fee: '0.01', net: '0.99' });
});

test('the payer pays: the payer_amount carries the fee, so an exact payment credits at least amount_crypto', (t) => {
  // amount_crypto 1, fee 2 % rounded up: payer_amount 1.02 (invoice.service's pricing).
  t.deepEqual(split('1.02', '2', 'payer'), { fee: '0.02', net: '1' });
  // 1 × 100 / 103, rounded down to 8 decimals: the merchant never gets more than the gross carries.
  t.deepEqual(split('1', '3', 'payer'), { fee: '0.02912622', net: '0.97087378' });
});

test('fee and credit always add up to the transfer, whoever pays', (t) => {
  for (const gross of ['0.00000001', '1', '123.45678901', '99999999.99999999']) {
    for (const percent of ['0.1', '1', '2.5', '33.333']) {
      for (const paidBy of ['merchant', 'payer'] as const) {
        const { fee, net } = feeOf(Amount.of(gross), { percent, paidBy }, 8);
        t.true(fee.plus(net).eq(Amount.of(gross)), `${gross} ${percent} ${paidBy}`);
        t.false(fee.isNegative() || net.isNegative());
      }
    }
  }
});
