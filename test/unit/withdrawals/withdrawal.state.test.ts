import test from 'ava';
import { creationEvent, isCancellable, nextMove, WITHDRAWAL_STATUSES, type WithdrawalTrigger } from '../../../src/withdrawals/withdrawal.state';

const TRIGGERS: WithdrawalTrigger[] = ['approve', 'reject', 'expire', 'cancel', 'claim', 'compliance', 'broadcast', 'confirm', 'fail', 'reorg'];

test('a review approved becomes pending and keeps its hold; refused or left 24 hours it is rejected and released', (t) => {
  t.deepEqual(nextMove('review', 'approve'), { to: 'pending', hold: 'keep', event: null });
  t.deepEqual(nextMove('review', 'reject'), { to: 'rejected', hold: 'release', event: 'withdrawal.rejected' });
  t.deepEqual(nextMove('review', 'expire'), { to: 'rejected', hold: 'release', event: 'withdrawal.rejected' });
});

test('awaiting_approval becomes pending on the second approval, or rejected; it does not expire', (t) => {
  t.deepEqual(nextMove('awaiting_approval', 'approve'), { to: 'pending', hold: 'keep', event: null });
  t.deepEqual(nextMove('awaiting_approval', 'reject'), { to: 'rejected', hold: 'release', event: 'withdrawal.rejected' });
  t.is(nextMove('awaiting_approval', 'expire'), null);
});

test('pending goes to processing, then broadcast, then completed with the hold settled', (t) => {
  t.deepEqual(nextMove('pending', 'claim'), { to: 'processing', hold: 'keep', event: 'withdrawal.processing' });
  t.deepEqual(nextMove('processing', 'broadcast'), { to: 'broadcast', hold: 'keep', event: 'withdrawal.broadcast' });
  t.deepEqual(nextMove('broadcast', 'confirm'), { to: 'completed', hold: 'settle', event: 'withdrawal.completed' });
});

test('a pending withdrawal the payout worker finds unverified or off the enforced whitelist goes to review with its hold kept and withdrawal.review', (t) => {
  t.deepEqual(nextMove('pending', 'compliance'), { to: 'review', hold: 'keep', event: 'withdrawal.review' });
  for (const s of WITHDRAWAL_STATUSES.filter((x) => x !== 'pending')) t.is(nextMove(s, 'compliance'), null, s);
});

test('a transaction that can no longer confirm fails the withdrawal and releases its hold', (t) => {
  t.deepEqual(nextMove('processing', 'fail'), { to: 'failed', hold: 'release', event: 'withdrawal.failed' });
  t.deepEqual(nextMove('broadcast', 'fail'), { to: 'failed', hold: 'release', event: 'withdrawal.failed' });
});

test('a reorganisation takes a completed withdrawal back to broadcast without touching its settled money', (t) => {
  t.deepEqual(nextMove('completed', 'reorg'), { to: 'broadcast', hold: 'keep', event: 'withdrawal.broadcast' });
});

test('the merchant cancels only before processing', (t) => {
  for (const s of ['pending', 'review', 'awaiting_approval'] as const) {
    t.deepEqual(nextMove(s, 'cancel'), { to: 'cancelled', hold: 'release', event: 'withdrawal.cancelled' }, s);
    t.true(isCancellable(s), s);
  }
  for (const s of ['processing', 'broadcast', 'completed', 'failed', 'rejected', 'cancelled'] as const) {
    t.is(nextMove(s, 'cancel'), null, s);
    t.false(isCancellable(s), s);
  }
});

test('failed, rejected and cancelled withdrawals never move again', (t) => {
  for (const s of ['failed', 'rejected', 'cancelled'] as const) for (const tr of TRIGGERS) t.is(nextMove(s, tr), null, `${s} ${tr}`);
});

test('no other move exists: a pending withdrawal is never approved, completed or failed directly', (t) => {
  const allowed = new Set(WITHDRAWAL_STATUSES.flatMap((s) => TRIGGERS.filter((tr) => nextMove(s, tr)).map((tr) => `${s}:${tr}`)));
  t.deepEqual([...allowed].sort(), [
    'awaiting_approval:approve',
    'awaiting_approval:cancel',
    'awaiting_approval:reject',
    'broadcast:confirm',
    'broadcast:fail',
    'completed:reorg',
    'pending:cancel',
    'pending:claim',
    'pending:compliance',
    'processing:broadcast',
    'processing:fail',
    'review:approve',
    'review:cancel',
    'review:expire',
    'review:reject',
  ]);
});

test('creating a withdrawal in review or awaiting_approval announces it; a pending one has no event', (t) => {
  t.is(creationEvent('review'), 'withdrawal.review');
  t.is(creationEvent('awaiting_approval'), 'withdrawal.awaiting_approval');
  t.is(creationEvent('pending'), null);
});
