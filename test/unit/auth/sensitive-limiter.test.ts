import test from 'ava';
import {
  DEFAULT_SENSITIVE_LIMITS,
  SENSITIVE_MAX_BLOCK_MS,
  SENSITIVE_SCOPES,
  SensitiveLimiter,
  type SensitiveLimits,
  type SensitiveScope,
} from '../../../src/auth/sensitive-limiter';

function clock(start = 1_767_225_600_000) {
  const c = { now: start, fn: () => c.now };
  return c;
}

const MIN = 60_000;
const LIMITS: SensitiveLimits = {
  key: { max: 2, windowMs: MIN },
  merchant: { max: 3, windowMs: MIN },
  account: { max: 4, windowMs: MIN },
  person: { max: 5, windowMs: MIN },
  ip: { max: 6, windowMs: MIN },
};

test('default limits are sensible and cover every scope', (t) => {
  t.deepEqual([...SENSITIVE_SCOPES].sort(), ['account', 'ip', 'key', 'merchant', 'person']);
  for (const s of SENSITIVE_SCOPES) {
    t.true(DEFAULT_SENSITIVE_LIMITS[s].max >= 1);
    t.true(DEFAULT_SENSITIVE_LIMITS[s].windowMs > 0);
  }
  t.like(DEFAULT_SENSITIVE_LIMITS, { key: { max: 10, windowMs: MIN }, merchant: { max: 30 }, person: { max: 10 }, ip: { max: 30 } });
  t.is(SENSITIVE_MAX_BLOCK_MS, 24 * 3_600_000);
  t.true(Object.isFrozen(DEFAULT_SENSITIVE_LIMITS));
});

for (const scope of SENSITIVE_SCOPES) {
  test(`scope ${scope} is reported when it is the one over its limit`, (t) => {
    const c = clock();
    const l = new SensitiveLimiter(c.fn, LIMITS);
    const max = LIMITS[scope].max;
    // other scopes vary per call, so only `scope` accumulates
    let i = 0;
    const subjects = () => {
      const s: Partial<Record<SensitiveScope, string>> = {};
      for (const other of SENSITIVE_SCOPES) s[other] = other === scope ? 'same' : `other-${i}`;
      i++;
      return s;
    };
    for (let n = 0; n < max; n++) t.deepEqual(l.check(subjects()), { allowed: true }, `op ${n + 1}`);
    t.deepEqual(l.check(subjects()), { allowed: false, scope, retryAfterSeconds: 60 });
  });
}

test('counts against every subject only if all allow it', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  t.true(l.check({ key: 'k1', merchant: 'm' }).allowed);
  t.true(l.check({ key: 'k1', merchant: 'm' }).allowed);
  t.like(l.check({ key: 'k1', merchant: 'm' }), { allowed: false, scope: 'key' }); // merchant not counted
  t.true(l.check({ key: 'k2', merchant: 'm' }).allowed); // merchant: 3rd
  t.like(l.check({ key: 'k3', merchant: 'm' }), { allowed: false, scope: 'merchant' });
  // k3 was not counted by the refused request
  t.true(l.check({ key: 'k3' }).allowed);
  t.true(l.check({ key: 'k3' }).allowed);
  t.false(l.check({ key: 'k3' }).allowed);
});

test('only the given scopes are checked', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  for (let n = 0; n < 6; n++) t.true(l.check({ ip: '192.0.2.1' }).allowed);
  t.like(l.check({ ip: '192.0.2.1' }), { allowed: false, scope: 'ip' });
  t.true(l.check({ ip: '192.0.2.2', person: 'u1' }).allowed);
  t.true(l.check({}).allowed);
});

test('the block ends after one window when the client waits', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  l.check({ key: 'k' });
  l.check({ key: 'k' });
  t.deepEqual(l.check({ key: 'k' }), { allowed: false, scope: 'key', retryAfterSeconds: 60 });
  c.now += MIN;
  t.true(l.check({ key: 'k' }).allowed);
  t.true(l.check({ key: 'k' }).allowed);
});

test('a sliding window: operations age out one by one', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  t.true(l.check({ key: 'k' }).allowed); // t=0
  c.now += 30_000;
  t.true(l.check({ key: 'k' }).allowed); // t=30
  c.now += 30_000; // t=60: the first one aged out
  t.true(l.check({ key: 'k' }).allowed);
});

test('repeating while blocked lengthens the block (doubling, at most once per window)', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  l.check({ key: 'k' });
  l.check({ key: 'k' });
  t.deepEqual(l.check({ key: 'k' }), { allowed: false, scope: 'key', retryAfterSeconds: 60 }); // over: 60 s block
  c.now += 1_000;
  t.deepEqual(l.check({ key: 'k' }), { allowed: false, scope: 'key', retryAfterSeconds: 120 }); // repeat: doubled
  c.now += 1_000;
  t.deepEqual(l.check({ key: 'k' }), { allowed: false, scope: 'key', retryAfterSeconds: 119 }); // same period: unchanged
  c.now += 59_000;
  t.deepEqual(l.check({ key: 'k' }), { allowed: false, scope: 'key', retryAfterSeconds: 240 });
  // a client that waited out the 60 s block would have been through by now
  c.now += 240_000;
  t.true(l.check({ key: 'k' }).allowed);
});

test('lengthening is capped at 24 hours', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  l.check({ person: 'p' });
  for (let n = 0; n < 5; n++) l.check({ person: 'p' });
  let last = 0;
  c.now -= MIN - 1_000; // first repeat 1 s into the block, then one a minute
  for (let n = 0; n < 40; n++) {
    c.now += MIN;
    const r = l.check({ person: 'p' });
    t.false(r.allowed);
    if (!r.allowed) last = r.retryAfterSeconds;
  }
  t.is(last, 24 * 3600);
});

test('a new block soon after the previous one doubles; staying clean resets it', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  const burst = () => {
    let r = l.check({ key: 'k' });
    while (r.allowed) r = l.check({ key: 'k' });
    return r;
  };
  t.like(burst(), { allowed: false, retryAfterSeconds: 60 });
  c.now += MIN;
  t.like(burst(), { allowed: false, retryAfterSeconds: 120 });
  c.now += 120_000 + 120_000; // the block, then clean for as long as it lasted
  t.like(burst(), { allowed: false, retryAfterSeconds: 60 });
});

test('several scopes refusing: the longest block is reported', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS);
  // block key k for 60 s, then lengthen it to 120 s
  l.check({ key: 'k' });
  l.check({ key: 'k' });
  l.check({ key: 'k' });
  c.now += 1_000;
  l.check({ key: 'k' });
  // block merchant m for 60 s
  for (let n = 0; n < 4; n++) l.check({ merchant: 'm', key: `x${n}` });
  const r = l.check({ key: 'k', merchant: 'm' });
  t.like(r, { allowed: false, scope: 'key' });
  // ties go to the first scope in order
  const c2 = clock();
  const l2 = new SensitiveLimiter(c2.fn, { ...LIMITS, ip: { max: 2, windowMs: MIN } });
  l2.check({ key: 'k', ip: 'i' });
  l2.check({ key: 'k', ip: 'i' });
  t.deepEqual(l2.check({ key: 'k', ip: 'i' }), { allowed: false, scope: 'key', retryAfterSeconds: 60 });
  t.like(l2.check({ ip: 'i' }), { allowed: false, scope: 'ip' }, 'both subjects were blocked');
});

test('memory is bounded: stale entries expire, and the cap holds', (t) => {
  const c = clock();
  const l = new SensitiveLimiter(c.fn, LIMITS, SENSITIVE_MAX_BLOCK_MS, 300);
  for (let n = 0; n < 1_000; n++) l.check({ key: `k${n}`, ip: `i${n}` });
  t.is(l.size, 300);
  c.now += MIN;
  l.check({ key: 'fresh' });
  t.is(l.size, 1);
});

test('invalid limits are rejected', (t) => {
  t.throws(() => new SensitiveLimiter(() => 0, { ...LIMITS, key: { max: 0, windowMs: MIN } }), { instanceOf: RangeError });
  t.throws(() => new SensitiveLimiter(() => 0, { ...LIMITS, ip: { max: 1, windowMs: 0 } }), { instanceOf: RangeError });
});
