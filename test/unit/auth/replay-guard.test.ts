import test from 'ava';
import { MemoryReplayGuard, REPLAY_MARK_KIND, REPLAY_RETENTION_MS, ReplayShareFullError } from '../../../src/auth/replay-guard';

const T0 = 1_767_225_600_000;
const TS = Math.floor(T0 / 1000);

/** Most tests look at one key; `seen` as the authenticator calls it for key `k`. */
const see = (g: MemoryReplayGuard, mark: string, nowMs: number, owner = 'k'): boolean => g.seen(mark, owner, TS, nowMs, `signature of ${mark}`);

test('first sight records, second sight is a replay', (t) => {
  const g = new MemoryReplayGuard();
  t.false(see(g, 'a', T0));
  t.true(see(g, 'a', T0 + 1));
  t.true(see(g, 'a', T0 + 1000));
  t.false(see(g, 'b', T0 + 1000));
  t.true(see(g, 'b', T0 + 1001));
});

test('retention covers 2 × 300 s skew plus margin', (t) => {
  t.true(REPLAY_RETENTION_MS >= 600_000);
  const g = new MemoryReplayGuard();
  t.false(see(g, 'sig', T0));
  // Still refused at every point of the window in which its timestamp could be accepted.
  for (let dt = 0; dt <= 601_000; dt += 7_000) t.true(see(g, 'sig', T0 + dt), `at +${dt}`);
  t.true(see(g, 'sig', T0 + REPLAY_RETENTION_MS - 1));
});

test('old signatures are evicted after the retention', (t) => {
  const g = new MemoryReplayGuard();
  for (let i = 0; i < 1000; i++) see(g, `s${i}`, T0 + i);
  t.is(g.size, 1000);
  see(g, 'late', T0 + REPLAY_RETENTION_MS + 60_000);
  t.is(g.size, 1);
  t.false(see(g, 's1', T0 + REPLAY_RETENTION_MS + 60_001));
});

test('memory stays bounded under a steady stream', (t) => {
  const g = new MemoryReplayGuard(10_000, 1_000);
  let max = 0;
  let replays = 0;
  for (let i = 0; i < 100_000; i++) {
    if (see(g, `s${i}`, T0 + i * 10)) replays++; // 100 per second for 1000 s
    max = Math.max(max, g.size);
  }
  t.is(replays, 0);
  // 10 s retention + at most one bucket of slack, at 100/s
  t.true(max <= 1_100, `max ${max}`);
});

test('a clock stepping backwards does not forget signatures', (t) => {
  const g = new MemoryReplayGuard();
  t.false(see(g, 'x', T0 + 1_000_000));
  t.true(see(g, 'x', T0));
  t.false(see(g, 'y', T0));
  t.true(see(g, 'y', T0 + 1_000_000 + 1));
});

test('a key at its share is refused alone; other keys and known signatures still answer', (t) => {
  const g = new MemoryReplayGuard(REPLAY_RETENTION_MS, 30_000, 3);
  t.false(see(g, 'a', T0));
  t.false(see(g, 'b', T0));
  t.false(see(g, 'c', T0));
  t.true(see(g, 'a', T0)); // known ones still answer
  const full = t.throws(() => see(g, 'd', T0), { instanceOf: ReplayShareFullError });
  t.true(full.retryAfterSeconds > 0 && full.retryAfterSeconds <= (REPLAY_RETENTION_MS + 30_000) / 1000);
  t.false(see(g, 'd', T0, 'other key'));
  t.false(see(g, 'd', T0 + REPLAY_RETENTION_MS + 30_000)); // space again after eviction
});

test("a forgotten claim frees its place in the key's share and may be presented again", (t) => {
  const g = new MemoryReplayGuard(REPLAY_RETENTION_MS, 30_000, 1);
  t.false(see(g, 'a', T0));
  g.forget('a', 'k', 'signature of a');
  t.is(g.size, 0);
  t.false(see(g, 'b', T0));
  t.throws(() => see(g, 'a', T0), { instanceOf: ReplayShareFullError });
});

test('a snapshot restored into a new guard refuses the same signatures and counts the same shares', (t) => {
  const g = new MemoryReplayGuard(REPLAY_RETENTION_MS, 30_000, 2);
  see(g, 'a', T0);
  see(g, 'b', T0 + 40_000);
  const snapshot = g.snapshot();
  t.is(snapshot.marks, REPLAY_MARK_KIND, 'the kind of mark is saved: a snapshot of another kind is not restored');
  const restored = new MemoryReplayGuard(REPLAY_RETENTION_MS, 30_000, 2);
  restored.restore(snapshot, T0 + 60_000);
  t.true(see(restored, 'a', T0 + 60_000));
  t.true(see(restored, 'b', T0 + 60_000));
  t.throws(() => see(restored, 'c', T0 + 60_000), { instanceOf: ReplayShareFullError });
  // Expired entries are not brought back.
  const late = new MemoryReplayGuard(REPLAY_RETENTION_MS, 30_000, 2);
  late.restore(snapshot, T0 + REPLAY_RETENTION_MS + 31_000);
  t.is(late.size, 1);
});

test('after a start without a saved guard, signatures timestamped up to the start are replays', (t) => {
  const g = new MemoryReplayGuard();
  g.refuseSignedUpTo(T0 + 999);
  t.true(g.seen('old', 'k', TS - 1, T0 + 1000, 'sig'));
  t.true(g.seen('same second', 'k', TS, T0 + 1000, 'sig'));
  t.false(g.seen('new', 'k', TS + 1, T0 + 1000, 'sig'));
});
