import test from 'ava';
import { parseConfig } from '../../../src/config/schema';
import { splitFee } from '../../../src/payouts/payout-worker';

test('payouts: the batch window and the replacement wait have defaults, take fractions of a second and refuse what cannot be', (t) => {
  t.like(parseConfig({}).payouts, { batch_window_seconds: 30, replace_after_blocks: 6, max_per_transaction: {} });
  t.like(parseConfig({ payouts: { batch_window_seconds: 0.5, replace_after_blocks: 2 } }).payouts, { batch_window_seconds: 0.5, replace_after_blocks: 2 });
  t.like(parseConfig({ payouts: { batch_window_seconds: 0 } }).payouts, { batch_window_seconds: 0 });
  t.throws(() => parseConfig({ payouts: { batch_window_seconds: -1 } }), { message: /payouts\.batch_window_seconds/ });
  t.throws(() => parseConfig({ payouts: { replace_after_blocks: 0 } }), { message: /payouts\.replace_after_blocks/ });
  t.throws(() => parseConfig({ payouts: { replace_after_blocks: 1.5 } }), { message: /payouts\.replace_after_blocks/ });
  t.throws(() => parseConfig({ payouts: { batch_window: 1 } }), { message: /payouts\.batch_window/ });
});

test('a payout fee splits into shares that add up to it, larger ones first', (t) => {
  t.deepEqual(splitFee(10n, 3), [4n, 3n, 3n]);
  t.deepEqual(splitFee(9n, 3), [3n, 3n, 3n]);
  t.deepEqual(splitFee(1n, 3), [1n, 0n, 0n]);
  t.deepEqual(splitFee(44630n, 1), [44630n]);
  for (const [fee, n] of [[12345n, 7], [100n, 100], [99n, 100]] as const) t.is(splitFee(fee, n).reduce((a, b) => a + b, 0n), fee);
});
