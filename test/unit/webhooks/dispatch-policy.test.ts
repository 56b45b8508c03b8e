import test from 'ava';
import type { Claimed, DueDelivery } from '../../../src/webhooks/attempt.store';
import { CLAIM_FRESH_MS, DispatchPolicy, ReadPlan } from '../../../src/webhooks/dispatch-policy';
import { Slots } from '../../../src/webhooks/in-flight-limits';

const due = (id: string, endpoint: string, account: string): DueDelivery => ({
  id,
  account_id: account,
  event_id: `event-${id}`,
  event_type: 'invoice.paid',
  endpoint_id: endpoint,
  url: `https://${endpoint}.example/hook`,
  status: 'pending',
  attempts: 0,
  schedule_attempts: 0,
  next_attempt_at: '2026-01-01T00:00:00.000Z',
});

const rows = (n: number, endpoint: string, account: string): DueDelivery[] => Array.from({ length: n }, (_, i) => due(`${endpoint}-${i}`, endpoint, account));
const claim = (d: DueDelivery, claimedAt = 0): Claimed => ({ delivery: d, claimedAt }) as unknown as Claimed;
const claimAll = (p: DispatchPolicy, at = 0): Claimed[] => {
  const claimed = p.chooseClaims().map((d) => claim(d, at));
  p.addClaims(claimed);
  return claimed;
};

test('slots hold per target, per account and overall', (t) => {
  const s = new Slots();
  const bounds = { maxInFlight: 5, perTarget: 2, perAccount: 3 };
  s.take('e1', 'a');
  s.take('e1', 'a');
  t.false(s.fits('e1', 'a', bounds), 'the target is full');
  s.take('e2', 'a');
  t.false(s.fits('e3', 'a', bounds), 'the account is full');
  t.true(s.fits('e4', 'b', bounds));
  s.take('e4', 'b');
  s.take('e4', 'b');
  t.false(s.fits('e5', 'c', bounds), 'all slots are taken');
  t.is(s.free('e1', 'a'), 1);
  t.true(s.fits('e5', 'c', bounds));
  t.is(s.inFlight, 4);
});

test("one account's slow targets start no more than its bound; another account's start beside them", (t) => {
  const p = new DispatchPolicy({ maxInFlight: 64, perTarget: 8, perAccount: 12 }, 1);
  p.replaceDue([...rows(20, 'slow1', 'a'), ...rows(20, 'slow2', 'a'), ...rows(20, 'slow3', 'a'), ...rows(5, 'other', 'b')]);
  claimAll(p);
  const { start, expired } = p.startable(1);
  t.deepEqual(expired, []);
  const of = (account: string) => start.filter((c) => c.delivery.account_id === account).length;
  t.is(of('a'), 12);
  t.is(of('b'), 5);
});

test("an account's claims ahead are bounded too, so its slow targets cannot take the room of everyone's claims", (t) => {
  const p = new DispatchPolicy({ maxInFlight: 4, perTarget: 2, perAccount: 3 }, 1);
  const many = Array.from({ length: 30 }, (_, i) => rows(10, `t${i}`, 'a')).flat();
  p.replaceDue([...many, ...rows(10, 'other', 'b')]);
  const claimed = claimAll(p);
  t.is(claimed.filter((c) => c.delivery.account_id === 'a').length, 2 * 3, 'two rounds of its account bound');
  t.true(claimed.some((c) => c.delivery.account_id === 'b'));
});

test('a claim that waited past its freshness is handed back instead of started, and takes no slot', (t) => {
  const p = new DispatchPolicy({ maxInFlight: 1, perTarget: 1 }, 1);
  p.replaceDue(rows(2, 'e', 'a'));
  claimAll(p, 0);
  const first = p.startable(0);
  t.is(first.start.length, 1);
  p.ended(first.start[0]!, 5);
  const second = p.startable(CLAIM_FRESH_MS);
  t.deepEqual(second.start, []);
  t.is(second.expired.length, 1);
  t.is(p.slots.inFlight, 0);
});

test('a target whose read was cut takes no appended rows and is refilled once its queue runs dry', (t) => {
  const p = new DispatchPolicy({ maxInFlight: 64, perTarget: 8 }, 1);
  p.refill('e', rows(128, 'e', 'a'));
  p.append([due('new', 'e', 'a')]);
  t.deepEqual(p.dryTargets(), []);
  for (let i = 0; i < 20; i++) {
    const claimed = claimAll(p);
    if (claimed.length === 0) break;
    for (const c of p.startable(0).start) p.ended(c, 1);
  }
  t.deepEqual(p.dryTargets(), ['e']);
  p.refill('e', []);
  t.deepEqual(p.dryTargets(), []);
});

test('the read plan: everything due first, then what fell due since, then only dry targets; the strongest need wins', (t) => {
  const plan = new ReadPlan();
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  t.true(plan.takeOutbox());
  t.false(plan.takeOutbox());
  t.deepEqual(plan.takeRead(at(0)), { read: 'everything due' });
  t.deepEqual(plan.takeRead(at(1)), { read: 'dry targets' });
  plan.tick(at(1));
  t.true(plan.takeOutbox());
  t.deepEqual(plan.takeRead(at(1)), { read: 'fallen due', since: at(0) });
  plan.tick(at(2));
  plan.need('dry targets');
  t.deepEqual(plan.takeRead(at(2)), { read: 'fallen due', since: at(1) });
  plan.tick(at(3));
  plan.need('everything due');
  t.deepEqual(plan.takeRead(at(3)), { read: 'everything due' });
  plan.tick(at(63));
  t.deepEqual(plan.takeRead(at(63)), { read: 'everything due' }, 'a minute after the last full read');
});
