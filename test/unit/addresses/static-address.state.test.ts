import test from 'ava';
import { nextStaticAddressMove, STATIC_ADDRESS_STATUSES, type StaticAddressTrigger } from '../../../src/addresses/static-address.state';

const TRIGGERS: StaticAddressTrigger[] = ['archive_manual', 'archive_inactive', 'restore_manual', 'restore_deposit'];

test('an active address is archived by hand or for being idle, with the reason its event carries', (t) => {
  t.deepEqual(nextStaticAddressMove('active', 'archive_manual'), { to: 'archived', event: 'static_address.archived', reason: 'manual' });
  t.deepEqual(nextStaticAddressMove('active', 'archive_inactive'), { to: 'archived', event: 'static_address.archived', reason: 'inactive' });
});

test('an archived address is restored by hand or by a deposit to it', (t) => {
  t.deepEqual(nextStaticAddressMove('archived', 'restore_manual'), { to: 'active', event: 'static_address.restored', reason: 'manual' });
  t.deepEqual(nextStaticAddressMove('archived', 'restore_deposit'), { to: 'active', event: 'static_address.restored', reason: 'deposit' });
});

test('archiving an archived address or restoring an active one is no move', (t) => {
  for (const trigger of ['archive_manual', 'archive_inactive'] as const) t.is(nextStaticAddressMove('archived', trigger), null);
  for (const trigger of ['restore_manual', 'restore_deposit'] as const) t.is(nextStaticAddressMove('active', trigger), null);
});

test('every move lands in a known status and leaves the one it came from', (t) => {
  for (const from of STATIC_ADDRESS_STATUSES) {
    for (const trigger of TRIGGERS) {
      const move = nextStaticAddressMove(from, trigger);
      if (move === null) continue;
      t.true(STATIC_ADDRESS_STATUSES.includes(move.to));
      t.not(move.to, from);
    }
  }
});
