import test from 'ava';
import {
  archiveAtOf,
  archivedFields,
  depositNoted,
  idleCutoffs,
  nextStaticAddressMove,
  restoredFields,
  STATIC_ADDRESS_STATUSES,
  type StaticAddressTrigger,
} from '../../../src/static-addresses/static-address.state';

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

const NOW = '2026-03-01T00:00:00.000Z';
const DAY = 86_400_000;

test("an archived address leaves the customer's active set: archived_at set, any restore-beside mark cleared", (t) => {
  t.deepEqual(archivedFields(NOW), { archived_at: NOW, deposit_revived: 0, updated_at: NOW });
});

test('a restored address starts its idle period again, unwarned; restored by a deposit beside another active one, it is marked so', (t) => {
  t.deepEqual(restoredFields(NOW, false), { archived_at: null, idle_since: NOW, warned_at: null, deposit_revived: 0, updated_at: NOW });
  t.is(restoredFields(NOW, true).deposit_revived, 1);
});

test('a deposit moves last_deposit_at forward and restarts the idle period; an older or the same transfer seen again changes nothing', (t) => {
  t.deepEqual(depositNoted(null, '2026-02-01T00:00:00.000Z', NOW), {
    last_deposit_at: '2026-02-01T00:00:00.000Z',
    idle_since: NOW,
    warned_at: null,
    updated_at: NOW,
  });
  t.like(depositNoted('2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', NOW), { last_deposit_at: '2026-02-01T00:00:00.000Z' });
  t.is(depositNoted('2026-02-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', NOW), null);
  t.is(depositNoted('2026-02-01T00:00:00.000Z', '2026-01-15T00:00:00.000Z', NOW), null);
});

test('idle for 180 days an address is archived, warned 7 days before (SPEC "Static address")', (t) => {
  const now = new Date(NOW);
  const { archiveBefore, warnBefore } = idleCutoffs(now, 180 * DAY, 7 * DAY);
  t.is(archiveBefore.getTime(), now.getTime() - 180 * DAY);
  t.is(warnBefore.getTime(), now.getTime() - 173 * DAY);
  t.is(
    archiveAtOf(warnBefore.toISOString(), 180 * DAY).toISOString(),
    new Date(now.getTime() + 7 * DAY).toISOString(),
    'the warning announces the archive 7 days ahead',
  );
});

test('a warning period longer than the idle period warns every idle address at once', (t) => {
  const now = new Date(NOW);
  t.is(idleCutoffs(now, 3 * DAY, 7 * DAY).warnBefore.getTime(), now.getTime());
});
