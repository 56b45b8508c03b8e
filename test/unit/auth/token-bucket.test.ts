import test from 'ava';
import { DEFAULT_REQUESTS_PER_MINUTE, TokenBuckets } from '../../../src/auth/token-bucket';

function clock(start = 1_767_225_600_000) {
  const c = { now: start, fn: () => c.now };
  return c;
}

test('default limit is 600 per minute', (t) => {
  t.is(DEFAULT_REQUESTS_PER_MINUTE, 600);
});

test('a fresh key has a full bucket; limit and remaining header values', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  t.deepEqual(b.take('k', 600), { allowed: true, limit: 600, remaining: 599, retryAfterSeconds: 0 });
  t.deepEqual(b.take('k', 600), { allowed: true, limit: 600, remaining: 598, retryAfterSeconds: 0 });
});

test('bucket empties, refuses with Retry-After, and does not go negative on refusals', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  for (let i = 0; i < 60; i++) t.true(b.take('k', 60).allowed);
  const r = b.take('k', 60);
  t.deepEqual(r, { allowed: false, limit: 60, remaining: 0, retryAfterSeconds: 1 });
  // refused requests do not consume: after 1 s (one token at 60/min) the next one passes
  for (let i = 0; i < 10; i++) t.false(b.take('k', 60).allowed);
  c.now += 1000;
  t.deepEqual(b.take('k', 60), { allowed: true, limit: 60, remaining: 0, retryAfterSeconds: 0 });
  t.false(b.take('k', 60).allowed);
});

test('refill is continuous, not per window', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  for (let i = 0; i < 600; i++) b.take('k', 600); // empty: 600/min = 1 token per 100 ms
  t.false(b.take('k', 600).allowed);
  c.now += 99;
  t.false(b.take('k', 600).allowed);
  c.now += 1;
  t.true(b.take('k', 600).allowed);
  t.false(b.take('k', 600).allowed);
  c.now += 1000; // 10 tokens
  for (let i = 0; i < 10; i++) t.true(b.take('k', 600).allowed, `token ${i}`);
  t.false(b.take('k', 600).allowed);
  c.now += 30_000; // half a minute → 300 tokens
  const r = b.take('k', 600);
  t.true(r.allowed);
  t.is(r.remaining, 299);
});

test('Retry-After is the time to the next whole token, rounded up to seconds', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  for (let i = 0; i < 6; i++) t.true(b.take('slow', 6).allowed); // 6/min = 1 token per 10 s
  t.is(b.take('slow', 6).retryAfterSeconds, 10);
  c.now += 2_500;
  t.is(b.take('slow', 6).retryAfterSeconds, 8); // 7.5 s → 8
  c.now += 7_000;
  t.is(b.take('slow', 6).retryAfterSeconds, 1); // 0.5 s → 1
  c.now += 500;
  t.true(b.take('slow', 6).allowed);
});

test('capacity is the per-minute limit; idle time does not accumulate beyond it', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  b.take('k', 10);
  c.now += 3_600_000;
  let allowed = 0;
  while (b.take('k', 10).allowed) allowed++;
  t.is(allowed, 10);
});

test('keys are independent', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  for (let i = 0; i < 5; i++) b.take('a', 5);
  t.false(b.take('a', 5).allowed);
  t.deepEqual(b.take('b', 5), { allowed: true, limit: 5, remaining: 4, retryAfterSeconds: 0 });
});

test('a lowered limit clamps the bucket; a raised one refills towards the new capacity', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  t.is(b.take('k', 600).remaining, 599);
  t.is(b.take('k', 10).remaining, 9);
  t.is(b.take('k', 10).limit, 10);
  c.now += 60_000;
  t.is(b.take('k', 100).remaining, 99);
});

test('a zero or invalid limit always refuses', (t) => {
  const b = new TokenBuckets(() => 0);
  t.like(b.take('k', 0), { allowed: false, remaining: 0, retryAfterSeconds: 60 });
  t.like(b.take('k', Number.NaN), { allowed: false, remaining: 0 });
});

test('full idle buckets are evicted', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  for (let i = 0; i < 1000; i++) b.take(`k${i}`, 600);
  t.is(b.size, 1000);
  c.now += 30_000;
  b.take('k0', 600); // touched: stays
  t.is(b.size, 1000);
  c.now += 30_000;
  b.take('fresh', 600);
  t.is(b.size, 2); // k0 and fresh
  // an evicted bucket was full anyway: a key coming back gets a full bucket
  t.is(b.take('k5', 600).remaining, 599);
});

test('a clock stepping backwards does not mint tokens', (t) => {
  const c = clock();
  const b = new TokenBuckets(c.fn);
  for (let i = 0; i < 60; i++) b.take('k', 60);
  c.now -= 10_000;
  t.false(b.take('k', 60).allowed);
  c.now += 10_000;
  t.false(b.take('k', 60).allowed);
  c.now += 1_000;
  t.true(b.take('k', 60).allowed);
});
