import test from 'ava';
import { countsAsRefunded, REFUND_STATUSES, refundEvent } from '../../../src/refunds/refund.state';

test('a refund counts in refunded_amount until it ends: failed, rejected, cancelled and expired give the amount back', (t) => {
  const ended = REFUND_STATUSES.filter((s) => !countsAsRefunded(s));
  t.deepEqual([...ended].sort(), ['cancelled', 'expired', 'failed', 'rejected']);
});

test('PRODUCT §16 events: completed, failed (also a rejection), cancelled, expired; the moves that only follow the withdrawal send none', (t) => {
  t.is(refundEvent('broadcast', 'completed'), 'refund.completed');
  t.is(refundEvent('broadcast', 'failed'), 'refund.failed');
  t.is(refundEvent('review', 'rejected'), 'refund.failed');
  t.is(refundEvent('pending', 'cancelled'), 'refund.cancelled');
  t.is(refundEvent('awaiting_address', 'expired'), 'refund.expired');
  t.is(refundEvent('failed', 'completed'), 'refund.completed', 'a failed payout mined after all');
  for (const [from, to] of [
    ['pending', 'processing'],
    ['processing', 'broadcast'],
    ['completed', 'broadcast'],
    ['review', 'pending'],
    ['completed', 'completed'],
  ] as const)
    t.is(refundEvent(from, to), null, `${from} -> ${to}`);
});
