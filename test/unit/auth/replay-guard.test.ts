import test from 'ava';
import { MemoryReplayGuard, REPLAY_RETENTION_MS, ReplayGuardFullError, type ReplayGuard } from '../../../src/auth/replay-guard';

const T0 = 1_767_225_600_000;

test('first sight records, second sight is a replay', (t) => {
  const g: ReplayGuard = new MemoryReplayGuard();
  t.false(g.seen('a', T0));
  t.true(g.seen('a', T0 + 1));
  t.true(g.seen('a', T0 + 1000));
  t.false(g.seen('b', T0 + 1000));
  t.true(g.seen('b', T0 + 1001));
});

test('retention covers 2 × 300 s skew plus margin', (t) => {
  t.true(REPLAY_RETENTION_MS >= 600_000);
  const g = new MemoryReplayGuard();
  t.false(g.seen('sig', T0));
  // Still refused at every point of the window in which its timestamp could be accepted.
  for (let dt = 0; dt <= 601_000; dt += 7_000) t.true(g.seen('sig', T0 + dt), `at +${dt}`);
  t.true(g.seen('sig', T0 + REPLAY_RETENTION_MS - 1));
});

test('old signatures are evicted after the retention', (t) => {
  const g = new MemoryReplayGuard();
  for (let i = 0; i < 1000; i++) g.seen(`s${i}`, T0 + i);
  t.is(g.size, 1000);
  g.seen('late', T0 + REPLAY_RETENTION_MS + 60_000);
  t.is(g.size, 1);
  t.false(g.seen('s1', T0 + REPLAY_RETENTION_MS + 60_001));
});

test('memory stays bounded under a steady stream', (t) => {
  const g = new MemoryReplayGuard(10_000, 1_000);
  let max = 0;
  let replays = 0;
  for (let i = 0; i < 100_000; i++) {
    if (g.seen(`s${i}`, T0 + i * 10)) replays++; // 100 per second for 1000 s
    max = Math.max(max, g.size);
  }
  t.is(replays, 0);
  // 10 s retention + at most one bucket of slack, at 100/s
  t.true(max <= 1_100, `max ${max}`);
});

test('a clock stepping backwards does not forget signatures', (t) => {
  const g = new MemoryReplayGuard();
  t.false(g.seen('x', T0 + 1_000_000));
  t.true(g.seen('x', T0));
  t.false(g.seen('y', T0));
  t.true(g.seen('y', T0 + 1_000_000 + 1));
});

test('cap reached: refuses to check rather than forget', (t) => {
  const g = new MemoryReplayGuard(REPLAY_RETENTION_MS, 30_000, 3);
  t.false(g.seen('a', T0));
  t.false(g.seen('b', T0));
  t.false(g.seen('c', T0));
  t.true(g.seen('a', T0)); // known ones still answer
  t.throws(() => g.seen('d', T0), { instanceOf: ReplayGuardFullError });
  t.false(g.seen('d', T0 + REPLAY_RETENTION_MS + 30_000)); // space again after eviction
});
