import test from 'ava';
import { ALIGN_MARGIN_MS, LATE_RETRY_MS, alignedPollDelayMs } from '../../../src/chains/poll-timing';

const T = 1_764_000_000_000; // a block's timestamp (ms), on a 3 s slot
const BLOCK = 3000;
const at = (sinceTip: number, intervalMs = 3000, blockMs = BLOCK, tipTimeMs: number | null = T) =>
  alignedPollDelayMs({ nowMs: T + sinceTip, tipTimeMs, blockMs, intervalMs });

test('a block just read: the next poll is just after the next block is due (its timestamp + a margin), not a fixed interval later', (t) => {
  t.is(at(ALIGN_MARGIN_MS), BLOCK);
  t.is(at(400), BLOCK + ALIGN_MARGIN_MS - 400);
  // Read late in its slot (a slow poll, a wake): still the next block's time, not an interval from now.
  t.is(at(2500), 650);
  // The fixed interval would have been 3000 ms each time.
  t.not(at(2500), 3000);
});

test('a poll interval below the block time polls no more often than blocks come', (t) => {
  t.is(at(ALIGN_MARGIN_MS, 1000), BLOCK);
  t.is(at(1200, 50), BLOCK + ALIGN_MARGIN_MS - 1200);
});

test('a poll interval above the block time still waits about that long, then lands just after a block', (t) => {
  // Read at T+150 with a 10 s interval: the first block due 7 s or more from now is T+9000.
  t.is(at(ALIGN_MARGIN_MS, 10_000), 9000);
  const d = at(1000, 10_000);
  t.true(d >= 10_000 - BLOCK && d <= 10_000 + ALIGN_MARGIN_MS, `${d}`);
  t.is((T + 1000 + d - T) % BLOCK, ALIGN_MARGIN_MS);
});

test('a block due and not there yet is asked for again soon, for a while; then the poll waits for the next slot', (t) => {
  // Due at T+3000 (+150): the poll at T+3150 still reads T.
  t.is(at(BLOCK + ALIGN_MARGIN_MS), LATE_RETRY_MS);
  t.is(at(BLOCK + ALIGN_MARGIN_MS + 600), LATE_RETRY_MS);
  // More than a second late: the slot was missed; the next one is at T+6000.
  t.is(at(BLOCK + ALIGN_MARGIN_MS + 1000), 2 * BLOCK + ALIGN_MARGIN_MS - (BLOCK + ALIGN_MARGIN_MS + 1000));
  t.is(at(5000), 2 * BLOCK + ALIGN_MARGIN_MS - 5000);
});

test('a tip whose time is far from now (a node syncing, blocks made on demand, a clock off) or missing: the fixed interval', (t) => {
  t.is(at(11 * BLOCK, 1000), 1000);
  t.is(at(3_600_000, 3000), 3000);
  t.is(at(-2 * BLOCK, 1000), 1000);
  t.is(at(100, 1000, BLOCK, null), 1000);
  // No block time: never aligned.
  t.is(at(100, 1000, 0), 1000);
  // A tip up to a block time in the future (the node's clock a little ahead): still aligned, bounded.
  t.is(at(-1000, 1000), BLOCK + ALIGN_MARGIN_MS);
});

test('always within [50 ms, max(interval, block time) + margin]', (t) => {
  for (let since = -BLOCK; since <= 10 * BLOCK; since += 37)
    for (const interval of [50, 1000, 3000, 7000]) {
      const d = at(since, interval);
      t.true(d >= 50 && d <= Math.max(interval, BLOCK) + ALIGN_MARGIN_MS, `${since} ${interval}: ${d}`);
    }
});
