/**
 * One watched set for the chains of a group (every EVM chain watches every EVM address, PRODUCT
 * §17): an address added on one chain is looked up on every chain of its group and held once; a
 * chain's own row of an address another chain of the group holds (per-chain treasuries) wins on
 * that chain; a chain outside the group sees nothing of it.
 */
import test from 'ava';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';

const groups = new Map([
  ['ethereum', 'family:evm'],
  ['polygon', 'family:evm'],
  ['base', 'family:evm'],
]);
const A = '0x1111111111111111111111111111111111111111';
const B = '0x2222222222222222222222222222222222222222';

test('an address added on one chain of a group is watched on every chain of it, once; not on a chain outside it', (t) => {
  const w = new WatchedAddresses(groups);
  w.add('ethereum', A, 'row-a');
  t.is(w.lookup('ethereum', A), 'row-a');
  t.is(w.lookup('polygon', A), 'row-a');
  t.is(w.lookup('base', A), 'row-a');
  t.is(w.lookup('tron', A), undefined);
  t.is(w.size(), 1);
  t.is(w.size('polygon'), 1);
  t.true(w.shares('ethereum', 'base'));
  t.false(w.shares('ethereum', 'tron'));
  t.deepEqual(
    w.mayWatch('base', [{ to: A }, { to: B }]).map((x) => x.to),
    [A],
  );
});

test("a chain's own row of an address the group holds wins on that chain; removing it leaves the group's", (t) => {
  const w = new WatchedAddresses(groups);
  w.add('ethereum', A, 'treasury-eth');
  w.add('polygon', A, 'treasury-pol');
  t.is(w.lookup('ethereum', A), 'treasury-eth');
  t.is(w.lookup('polygon', A), 'treasury-pol');
  t.is(w.lookup('base', A), 'treasury-eth');
  w.remove('polygon', A);
  t.is(w.lookup('polygon', A), 'treasury-eth');
  w.remove('ethereum', A);
  t.is(w.lookup('base', A), undefined);
});

test('without groups every chain watches its own addresses only', (t) => {
  const w = new WatchedAddresses();
  w.add('ethereum', A, 'row-a');
  t.is(w.lookup('polygon', A), undefined);
  t.false(w.shares('ethereum', 'polygon'));
});
