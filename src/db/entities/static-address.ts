import { EntitySchema } from 'typeorm';

export type StaticAddressStatus = 'active' | 'archived';

/**
 * A customer's permanent deposit address of one coin (PRODUCT §7). Its id is the id of the wallet
 * address row it was issued as (`addresses.id`), so a transfer's `address_id` names it and a
 * deposit's transaction row carries it as `address_id`.
 */
export interface StaticAddressRow {
  id: string;
  account_id: string;
  customer_id: string;
  coin_id: string;
  address: string;
  label: string | null;
  status: StaticAddressStatus;
  archived_at: string | null;
  last_deposit_at: string | null;
  /** The last creation, restore or deposit: what the automatic archive counts from. */
  idle_since: string;
  /** When `static_address.archive_warning` was sent for this idle period; null before. */
  warned_at: string | null;
  /**
   * 1 for an address a deposit made active while the customer had another active one for the coin
   * (both stay active, docs/decisions.md); the one-active-address index leaves it out. 0 otherwise.
   */
  deposit_revived: number;
  created_at: string;
  updated_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };

export const StaticAddressEntity = new EntitySchema<StaticAddressRow>({
  name: 'StaticAddress',
  tableName: 'static_addresses',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    customer_id: { type: 'varchar', length: 128 },
    coin_id: { type: 'varchar', length: 36 },
    address: { type: 'varchar', length: 128 },
    label: { type: 'varchar', length: 200, nullable: true },
    status: { type: 'varchar', length: 16 },
    archived_at: { ...ts, nullable: true },
    last_deposit_at: { ...ts, nullable: true },
    idle_since: ts,
    warned_at: { ...ts, nullable: true },
    deposit_revived: { type: 'integer', default: 0 },
    created_at: ts,
    updated_at: ts,
  },
});
