import type { StaticAddressStatus } from '../db/entities/static-address';
import type { EventType } from '../shared/events';

export const STATIC_ADDRESS_STATUSES: readonly StaticAddressStatus[] = ['active', 'archived'];

/**
 * What moves a static address (SPEC "Static address", PRODUCT §7): archived by hand (`manual`) or
 * after its idle period (`inactive`); restored by hand (`manual`) or by a deposit to it (`deposit`).
 */
export type StaticAddressTrigger = 'archive_manual' | 'archive_inactive' | 'restore_manual' | 'restore_deposit';

export interface StaticAddressMove {
  to: StaticAddressStatus;
  event: EventType;
  /** The `reason` its event carries. */
  reason: 'manual' | 'inactive' | 'deposit';
}

const MOVES: Readonly<Record<StaticAddressStatus, Partial<Record<StaticAddressTrigger, StaticAddressMove>>>> = {
  active: {
    archive_manual: { to: 'archived', event: 'static_address.archived', reason: 'manual' },
    archive_inactive: { to: 'archived', event: 'static_address.archived', reason: 'inactive' },
  },
  archived: {
    restore_manual: { to: 'active', event: 'static_address.restored', reason: 'manual' },
    restore_deposit: { to: 'active', event: 'static_address.restored', reason: 'deposit' },
  },
};

/** The move `trigger` makes from `from`; null when the state does not allow it (archiving an archived address, restoring an active one). */
export function nextStaticAddressMove(from: StaticAddressStatus, trigger: StaticAddressTrigger): StaticAddressMove | null {
  return MOVES[from][trigger] ?? null;
}

/** What an archive writes besides the status (the address leaves the customer's active set; any restore-beside mark ends). */
export const archivedFields = (now: string) => ({ archived_at: now, deposit_revived: 0, updated_at: now });

/**
 * What a restore writes besides the status: the idle period starts again, unwarned. `beside`: a
 * deposit restored it while the customer has another active address for the coin (both are then
 * active, docs/decisions.md); the one-active-address index leaves it out.
 */
export const restoredFields = (now: string, beside: boolean) => ({
  archived_at: null,
  idle_since: now,
  warned_at: null,
  deposit_revived: beside ? 1 : 0,
  updated_at: now,
});

/**
 * A transfer to the address seen at `seenAt`: `last_deposit_at` moves forward only (a rescan of
 * an older transfer changes nothing), and the idle period starts again, unwarned. Null when it is
 * not newer.
 */
export function depositNoted(
  lastDepositAt: string | null,
  seenAt: string,
  now: string,
): { last_deposit_at: string; idle_since: string; warned_at: null; updated_at: string } | null {
  if (lastDepositAt !== null && lastDepositAt >= seenAt) return null;
  return { last_deposit_at: seenAt, idle_since: now, warned_at: null, updated_at: now };
}

/**
 * The automatic archive (SPEC "Static address": no incoming transfer for the platform's period,
 * warned some days before): addresses idle since `archiveBefore` or earlier are archived, those
 * idle since `warnBefore` or earlier are warned first (at once when the warning period is longer
 * than the idle one).
 */
export function idleCutoffs(now: Date, archiveAfterMs: number, warnMs: number): { archiveBefore: Date; warnBefore: Date } {
  const at = now.getTime();
  return { archiveBefore: new Date(at - archiveAfterMs), warnBefore: new Date(at - Math.max(0, archiveAfterMs - warnMs)) };
}

/** When an address idle since `idleSince` is archived: what `static_address.archive_warning` announces. */
export const archiveAtOf = (idleSince: string, archiveAfterMs: number): Date => new Date(new Date(idleSince).getTime() + archiveAfterMs);
