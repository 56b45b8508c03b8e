/**
 * What a confirmed payout charges its withdrawals (PRODUCT §8: `total_debit` = amount +
 * platform_fee + network_fee_reserved; §8a: fees in the withdrawn coin; §14: a payout mined after
 * all is completed and charged again).
 */
import test from 'ava';
import { completionMove, confirmationsOnCompletion, leftCharged, networkFeeCharged, splitFee } from '../../../src/payouts/payout-charges';

test('a payout fee splits into shares that add up to it, larger ones first', (t) => {
  t.deepEqual(splitFee(10n, 3), [4n, 3n, 3n]);
  t.deepEqual(splitFee(9n, 3), [3n, 3n, 3n]);
  t.deepEqual(splitFee(1n, 3), [1n, 0n, 0n]);
  t.deepEqual(splitFee(44630n, 1), [44630n]);
  for (const [fee, n] of [
    [12345n, 7],
    [100n, 100],
    [99n, 100],
  ] as const)
    t.is(
      splitFee(fee, n).reduce((a, b) => a + b, 0n),
      fee,
    );
});

const ETH = { coinId: 'eth', decimals: 18 };
const w = (mode: 'reserved' | 'actual', coin_id = 'eth') => ({ network_fee_reserved: '0.002', network_fee_mode: mode, coin_id });

test('in reserved mode a withdrawal is charged its whole network-fee reserve, whatever the chain took', (t) => {
  t.is(networkFeeCharged(w('reserved'), 1_000_000_000_000_000n, ETH).toString(), '0.002');
  t.is(networkFeeCharged(w('reserved'), 5_000_000_000_000_000n, ETH).toString(), '0.002');
});

test('in actual mode a withdrawal is charged its share of the fee paid, never above its reserve (the rest returns to available)', (t) => {
  t.is(networkFeeCharged(w('actual'), 1_500_000_000_000_000n, ETH).toString(), '0.0015');
  t.is(networkFeeCharged(w('actual'), 2_000_000_000_000_000n, ETH).toString(), '0.002');
  t.is(networkFeeCharged(w('actual'), 9_000_000_000_000_000n, ETH).toString(), '0.002');
});

test('a token withdrawal is charged its reserve even in actual mode: the fee was paid in another coin', (t) => {
  t.is(networkFeeCharged(w('actual', 'usdt'), 1n, ETH).toString(), '0.002');
});

test('a confirmed payout completes its broadcast withdrawals; failed ones only when the payout was reopened, mined after all (PRODUCT §14)', (t) => {
  t.is(completionMove('broadcast', false), 'confirm');
  t.is(completionMove('broadcast', true), 'confirm');
  t.is(completionMove('failed', true), 'reopen');
  t.is(completionMove('failed', false), null);
  for (const status of ['cancelled', 'rejected', 'completed', 'pending', 'review'] as const) t.is(completionMove(status, true), null, status);
});

test("a completed withdrawal shows at least the chain's confirmations", (t) => {
  t.is(confirmationsOnCompletion(0, 6), 6);
  t.is(confirmationsOnCompletion(9, 6), 9);
});

test("what left the wallet without reaching the payee is charged only to a payout's one withdrawal", (t) => {
  t.is(leftCharged(1, 250_000n, 6).toString(), '0.25');
  t.is(leftCharged(3, 250_000n, 6).toString(), '0');
});
