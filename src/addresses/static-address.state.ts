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
