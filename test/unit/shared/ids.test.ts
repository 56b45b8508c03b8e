import test from 'ava';
import { isUuid, newTimeOrderedId } from '../../../src/shared/ids';

test('a time-ordered id is a version 7 UUID whose first 48 bits are the milliseconds', (t) => {
  const ms = Date.parse('2026-11-23T16:00:00.123Z');
  const id = newTimeOrderedId(ms);
  t.true(isUuid(id));
  t.is(id[14], '7');
  t.true('89ab'.includes(id[19]!));
  t.is(parseInt(id.replace(/-/g, '').slice(0, 12), 16), ms);
});

test('time-ordered ids sort by time, and ids of one millisecond still differ', (t) => {
  const ids = [0, 1, 2, 1000, 86_400_000].map((d) => newTimeOrderedId(1_700_000_000_000 + d));
  t.deepEqual([...ids].sort(), ids);
  const same = new Set(Array.from({ length: 1000 }, () => newTimeOrderedId(1_700_000_000_000)));
  t.is(same.size, 1000);
});
