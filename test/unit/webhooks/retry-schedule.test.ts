import test from 'ava';
import { FakeClock } from '../../../src/shared/clock';
import { afterAttempt, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../../src/webhooks/retry-schedule';

const MIN = 60_000;

test('the waits after failed attempts are 1 min, 5 min, 15 min, 1 h, 6 h and 24 h', (t) => {
  t.deepEqual([...RETRY_DELAYS_MS], [MIN, 5 * MIN, 15 * MIN, 60 * MIN, 6 * 60 * MIN, 24 * 60 * MIN]);
  t.is(MAX_ATTEMPTS, 7);
});

test('seven failed attempts over about 31 hours, then the delivery is exhausted', (t) => {
  const clock = new FakeClock('2026-03-01T00:00:00.000Z');
  const start = clock.now().getTime();
  const plan: string[] = [];
  let state = afterAttempt(1, false, clock.now());
  for (let attempt = 2; state.status === 'failed'; attempt++) {
    plan.push(state.next_attempt_at!);
    clock.set(state.next_attempt_at!);
    state = afterAttempt(attempt, false, clock.now());
  }
  t.deepEqual(plan, [
    '2026-03-01T00:01:00.000Z',
    '2026-03-01T00:06:00.000Z',
    '2026-03-01T00:21:00.000Z',
    '2026-03-01T01:21:00.000Z',
    '2026-03-01T07:21:00.000Z',
    '2026-03-02T07:21:00.000Z',
  ]);
  t.deepEqual(state, { status: 'exhausted', next_attempt_at: null });
  t.is((clock.now().getTime() - start) / 3_600_000, 31.35);
});

test('a 2xx at any attempt ends the schedule as succeeded, the last one included', (t) => {
  const at = new Date('2026-03-01T00:00:00.000Z');
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    t.deepEqual(afterAttempt(attempt, true, at), { status: 'succeeded', next_attempt_at: null });
  }
});

test('each wait counts from the end of the failed attempt', (t) => {
  const at = new Date('2026-03-01T12:00:30.250Z');
  t.deepEqual(afterAttempt(3, false, at), { status: 'failed', next_attempt_at: '2026-03-01T12:15:30.250Z' });
});
