import test from 'ava';
import { parseConfig } from '../../../src/config/schema';

test('payouts: the batch window and the replacement wait have defaults, take fractions of a second and refuse what cannot be', (t) => {
  t.like(parseConfig({}).payouts, { batch_window_seconds: 30, replace_after_blocks: 6, max_per_transaction: {} });
  t.like(parseConfig({ payouts: { batch_window_seconds: 0.5, replace_after_blocks: 2 } }).payouts, { batch_window_seconds: 0.5, replace_after_blocks: 2 });
  t.like(parseConfig({ payouts: { batch_window_seconds: 0 } }).payouts, { batch_window_seconds: 0 });
  t.throws(() => parseConfig({ payouts: { batch_window_seconds: -1 } }), { message: /payouts\.batch_window_seconds/ });
  t.throws(() => parseConfig({ payouts: { replace_after_blocks: 0 } }), { message: /payouts\.replace_after_blocks/ });
  t.throws(() => parseConfig({ payouts: { replace_after_blocks: 1.5 } }), { message: /payouts\.replace_after_blocks/ });
  t.throws(() => parseConfig({ payouts: { batch_window: 1 } }), { message: /payouts\.batch_window/ });
});
