import test from 'ava';
import { splitFee } from '../../../src/payouts/payout-worker';

test('a payout fee splits into shares that add up to it, larger ones first', (t) => {
  t.deepEqual(splitFee(10n, 3), [4n, 3n, 3n]);
  t.deepEqual(splitFee(9n, 3), [3n, 3n, 3n]);
  t.deepEqual(splitFee(1n, 3), [1n, 0n, 0n]);
  t.deepEqual(splitFee(44630n, 1), [44630n]);
  for (const [fee, n] of [[12345n, 7], [100n, 100], [99n, 100]] as const) t.is(splitFee(fee, n).reduce((a, b) => a + b, 0n), fee);
});
