import { EntitySchema } from 'typeorm';

export type CustodyRuleStatus = 'active' | 'removed';

/** A cold-storage rule (PRODUCT §18): above `keep`, an account's available balance of the coin goes to `address`. */
export interface CustodyRuleRow {
  id: string;
  account_id: string;
  coin_id: string;
  /** The merchant's cold address. */
  address: string;
  /** What stays available (hot), an exact decimal of the coin. */
  keep: string;
  status: CustodyRuleStatus;
  /** The member (email) who set the address as it is. */
  address_set_by: string;
  address_set_at: string;
  /** From when the address is used: its setting plus the security-change window. */
  effective_at: string;
  /** How many forwards the rule made; the next one is number `forwards + 1`. */
  forwards: number;
  /** The rule's last forward (its withdrawal); the next is made once it is completed, failed, rejected or cancelled. */
  last_withdrawal_id: string | null;
  created_at: string;
  updated_at: string;
  removed_at: string | null;
}

/** One forward of a rule: its withdrawal. (rule_id, seq) is the guard that a run makes one. */
export interface CustodyForwardRow {
  rule_id: string;
  seq: number;
  account_id: string;
  coin_id: string;
  withdrawal_id: string;
  created_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };
const ref = { type: 'varchar' as const, length: 36 };

export const CustodyRuleEntity = new EntitySchema<CustodyRuleRow>({
  name: 'CustodyRule',
  tableName: 'custody_rules',
  columns: {
    id: { ...ref, primary: true },
    account_id: ref,
    coin_id: ref,
    address: { type: 'varchar', length: 128 },
    keep: { type: 'varchar', length: 80 },
    status: { type: 'varchar', length: 16 },
    address_set_by: { type: 'varchar', length: 254 },
    address_set_at: ts,
    effective_at: ts,
    forwards: { type: 'integer' },
    last_withdrawal_id: { ...ref, nullable: true },
    created_at: ts,
    updated_at: ts,
    removed_at: { ...ts, nullable: true },
  },
});

export const CustodyForwardEntity = new EntitySchema<CustodyForwardRow>({
  name: 'CustodyForward',
  tableName: 'custody_forwards',
  columns: {
    rule_id: { ...ref, primary: true },
    seq: { type: 'integer', primary: true },
    account_id: ref,
    coin_id: ref,
    withdrawal_id: ref,
    created_at: ts,
  },
});
