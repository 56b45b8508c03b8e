/**
 * Withdraw everything (PRODUCT §14): the largest amount whose total debit fits the available
 * balance, with a platform fee rounded up and a network fee that may grow with the amount.
 */
import test from 'ava';
import { Amount } from '../../../src/shared/amount';
import { largestPayable, largestWithin, type WithdrawalFees } from '../../../src/withdrawals/withdraw-all';

const DECIMALS = 8;
const a = (s: string) => Amount.of(s);
const percentOf = (p: string) => (amount: Amount) => amount.percent(p, DECIMALS, 'up');
const feesWith =
  (p: string, network: (amount: Amount) => Amount) =>
  async (amount: Amount): Promise<WithdrawalFees> => {
    const platformFee = percentOf(p)(amount);
    const networkFee = network(amount);
    return { platformFee, networkFee, total: amount.plus(platformFee).plus(networkFee) };
  };

test('without a platform fee, the largest amount is the budget itself', (t) => {
  t.is(largestWithin(a('1.5'), DECIMALS, percentOf('0')).toString(), '1.5');
  t.is(largestWithin(a('0'), DECIMALS, percentOf('0')).toString(), '0');
  t.is(largestWithin(a('-1'), DECIMALS, percentOf('0')).toString(), '0');
});

test('with a platform fee rounded up, the largest amount and its fee fit the budget, and one base unit more does not', (t) => {
  for (const [budget, p] of [
    ['1', '1.5'],
    ['0.00000102', '1'],
    ['0.12345678', '2.5'],
    ['7', '0.01'],
  ] as const) {
    const fee = percentOf(p);
    const amount = largestWithin(a(budget), DECIMALS, fee);
    t.true(amount.plus(fee(amount)).lte(a(budget)), `${amount.toString()} fits ${budget}`);
    const more = amount.plus(Amount.fromBaseUnits(1n, DECIMALS));
    t.true(more.plus(fee(more)).gt(a(budget)), `${more.toString()} does not fit ${budget}`);
  }
});

test('a network fee that does not depend on the amount: the amount is available less it, and the total is all of available', async (t) => {
  const found = await largestPayable({
    available: a('1'),
    decimals: DECIMALS,
    minimum: a('0.00000294'),
    platformFee: percentOf('0'),
    feesOf: feesWith('0', () => a('0.000025')),
  });
  t.is(found!.amount.toString(), '0.999975');
  t.is(found!.fees.total.toString(), '1');
});

test('a network fee that grows with the amount (more coins to spend) is priced again for the smaller amount until it fits', async (t) => {
  // 0.0001 a coin spent, one coin for every 0.3 of the amount.
  const network = (amount: Amount) => a('0.0001').times(String(Math.ceil(Number(amount.toString()) / 0.3)));
  const found = await largestPayable({
    available: a('1'),
    decimals: DECIMALS,
    minimum: a('0.00000294'),
    platformFee: percentOf('0'),
    feesOf: feesWith('0', network),
  });
  t.is(found!.amount.toString(), '0.9996');
  t.is(found!.fees.networkFee.toString(), '0.0004');
  t.true(found!.fees.total.lte(a('1')));
});

test('nothing at or above the least payment fits: no amount', async (t) => {
  const req = { decimals: DECIMALS, minimum: a('0.00000294'), platformFee: percentOf('0'), feesOf: feesWith('0', () => a('0.000025')) };
  t.is(await largestPayable({ ...req, available: a('0.00002') }), null);
  t.is(await largestPayable({ ...req, available: a('0.00002793') }), null);
  t.truthy(await largestPayable({ ...req, available: a('0.00002794') }));
});

test('a network fee that keeps growing faster than the amount shrinks is refused, not priced forever', async (t) => {
  let n = 0;
  const network = () => a('0.000001').times(String(++n));
  await t.throwsAsync(
    largestPayable({ available: a('1'), decimals: DECIMALS, minimum: a('0.00000294'), platformFee: percentOf('0'), feesOf: feesWith('0', network) }),
    { message: /did not settle/ },
  );
});
