import test from 'ava';
import { IP_BLOCK_FAILURES, IP_BLOCK_MS, IP_BLOCK_WINDOW_MS, IP_MAX_BLOCK_MS, IpBlocker } from '../../../src/auth/ip-blocker';

function clock(start = 1_767_225_600_000) {
  const c = { now: start, fn: () => c.now };
  return c;
}

function fail(b: IpBlocker, ip: string, n: number): void {
  for (let i = 0; i < n; i++) b.recordFailure(ip);
}

test('default thresholds', (t) => {
  t.is(IP_BLOCK_FAILURES, 20);
  t.is(IP_BLOCK_WINDOW_MS, 60_000);
  t.is(IP_BLOCK_MS, 60_000);
  t.is(IP_MAX_BLOCK_MS, 3_600_000);
});

test('blocks after the threshold of failures within the window (defaults)', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn);
  fail(b, '192.0.2.1', IP_BLOCK_FAILURES - 1);
  t.is(b.blockedFor('192.0.2.1'), 0);
  b.recordFailure('192.0.2.1');
  t.is(b.blockedFor('192.0.2.1'), IP_BLOCK_MS);
  t.is(b.blockedFor('192.0.2.2'), 0, 'other IPs are not affected');
});

test('failures outside the sliding window do not add up', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 5, windowMs: 10_000, blockMs: 60_000, maxBlockMs: 3_600_000 });
  fail(b, 'ip', 4);
  c.now += 10_000;
  fail(b, 'ip', 4);
  t.is(b.blockedFor('ip'), 0);
  c.now += 5_000;
  b.recordFailure('ip'); // 4 of the last 10 s + this one
  t.true(b.blockedFor('ip') > 0);
});

test('a correct request while blocked is still blocked; success does not lift the block', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000 });
  fail(b, 'ip', 3);
  t.true(b.blockedFor('ip') > 0);
  b.recordSuccess('ip');
  c.now += 1_000;
  t.true(b.blockedFor('ip') > 0);
});

test('the block ends when nothing is sent meanwhile', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000 });
  fail(b, 'ip', 3);
  c.now += 59_999;
  // (not asking in between: asking would be a request while blocked)
  c.now += 1;
  t.is(b.blockedFor('ip'), 0);
  // and requests pass again; the failure count started afresh
  fail(b, 'ip', 2);
  t.is(b.blockedFor('ip'), 0);
});

test('repeating while blocked lengthens the block, at most one doubling per base period, capped', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 600_000 });
  fail(b, 'ip', 3); // block 60 s, ends at +60 s
  c.now += 1_000;
  t.is(b.blockedFor('ip'), 59_000, 'the first refusal only tells the client');
  c.now += 1_000;
  t.is(b.blockedFor('ip'), 120_000, 'the first repeat doubles at once: now + 120 s');
  c.now += 1_000;
  t.is(b.blockedFor('ip'), 119_000, 'another repeat within the period: unchanged end');
  c.now += 59_000; // 60 s since the last doubling
  t.is(b.blockedFor('ip'), 240_000);
  c.now += 60_000;
  t.is(b.blockedFor('ip'), 480_000);
  c.now += 60_000;
  t.is(b.blockedFor('ip'), 600_000, 'capped at maxBlockMs');
  c.now += 60_000;
  t.is(b.blockedFor('ip'), 600_000, 'hammering keeps it at the cap');
  // stop asking: the block ends 600 s after the last doubling
  c.now += 599_999;
  c.now += 1;
  t.is(b.blockedFor('ip'), 0);
});

test('a blocked client that keeps retrying stays blocked longer than one that waits', (t) => {
  const opts = { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000 };
  const c1 = clock();
  const patient = new IpBlocker(c1.fn, opts);
  const c2 = clock();
  const eager = new IpBlocker(c2.fn, opts);
  fail(patient, 'ip', 3);
  fail(eager, 'ip', 3);
  let eagerEnd = 0;
  for (let s = 1; s <= 300; s++) {
    c2.now += 1_000;
    if (eager.blockedFor('ip') === 0) {
      eagerEnd = s;
      break;
    }
  }
  c1.now += 60_000;
  t.is(patient.blockedFor('ip'), 0);
  t.is(eagerEnd, 0, 'still blocked after 5 minutes of retrying every second');
});

test('a new block soon after the previous one doubles; staying clean resets it', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000 });
  fail(b, 'ip', 3); // 60 s
  c.now += 60_000;
  fail(b, 'ip', 3); // right after: 120 s
  c.now += 119_999;
  c.now += 1;
  t.is(b.blockedFor('ip'), 0);
  c.now += 120_000; // clean for as long as the last block
  fail(b, 'ip', 3);
  c.now += 60_000;
  t.is(b.blockedFor('ip'), 0, 'back to a 60 s block');
});

test('successes do not wash out failures counted in the window', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 5, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000 });
  for (let i = 0; i < 4; i++) {
    b.recordFailure('ip');
    b.recordSuccess('ip');
  }
  t.is(b.blockedFor('ip'), 0);
  b.recordFailure('ip');
  t.true(b.blockedFor('ip') > 0);
});

test('memory is bounded: stale entries expire, and the cap holds', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000, maxTracked: 500 });
  for (let i = 0; i < 2_000; i++) b.recordFailure(`10.0.${i >> 8}.${i & 255}`);
  t.is(b.size, 500);
  c.now += 60_000;
  b.recordFailure('198.51.100.1');
  t.is(b.size, 1);
  b.recordSuccess('198.51.100.1');
  t.is(b.size, 1, 'a failure still in the window is remembered');
  c.now += 60_000;
  b.recordSuccess('198.51.100.1');
  t.is(b.size, 0);
});

test('a flood of new addresses never evicts a blocked one: the oldest unblocked entry goes first', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 3, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000, maxTracked: 10 });
  fail(b, 'blocked', 3);
  fail(b, 'counting', 2);
  for (let i = 0; i < 1000; i++) b.recordFailure(`flood-${i}`);
  t.true(b.size <= 10);
  t.true(b.blockedFor('blocked') > 0, 'the block holds');
  // 'counting' was the oldest unblocked entry: it was evicted, its two failures forgotten.
  fail(b, 'counting', 2);
  t.is(b.blockedFor('counting'), 0);
});

test('a table full of blocked addresses keeps every block; new addresses go uncounted until a block ends', (t) => {
  const c = clock();
  const b = new IpBlocker(c.fn, { failures: 2, windowMs: 60_000, blockMs: 60_000, maxBlockMs: 3_600_000, maxTracked: 3 });
  for (const ip of ['a', 'b', 'c']) fail(b, ip, 2);
  fail(b, 'newcomer', 5);
  t.is(b.blockedFor('newcomer'), 0, 'not tracked while every slot is blocked');
  for (const ip of ['a', 'b', 'c']) t.true(b.blockedFor(ip) > 0, ip);
  c.now += 5 * 60_000; // every block (even a doubled one) has ended
  fail(b, 'newcomer', 2);
  t.true(b.blockedFor('newcomer') > 0, 'counted again once a slot is free');
  t.true(b.size <= 3);
});

test('invalid options are rejected', (t) => {
  t.throws(() => new IpBlocker(() => 0, { failures: 0, windowMs: 1, blockMs: 1, maxBlockMs: 1 }), { instanceOf: RangeError });
  t.throws(() => new IpBlocker(() => 0, { failures: 1, windowMs: 1, blockMs: 10, maxBlockMs: 5 }), { instanceOf: RangeError });
});
