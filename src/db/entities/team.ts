import { EntitySchema } from 'typeorm';

export type AccountStatus = 'active' | 'frozen';
export type Role = 'owner' | 'admin' | 'developer';

export interface AccountRow {
  id: string;
  name: string;
  status: AccountStatus;
  verified: boolean;
  platform_fee_percent: string;
  default_fiat: string | null;
  invoice_ttl_minutes: number;
  underpayment_tolerance_percent: string;
  dual_approval_threshold: string | null;
  /** In the default fiat: withdrawals beyond it within 24 hours wait in review (`limit`); null: none. */
  daily_withdrawal_limit: string | null;
  withdrawal_whitelist_enforced: boolean;
  created_at: string;
  updated_at: string;
}

export interface MemberRow {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  status: 'active' | 'removed';
  totp_secret_sealed: string;
  totp_last_step: number | null;
  /** When the member got its role: added, or promoted (a demotion only takes rights away and keeps it). */
  role_granted_at: string | null;
  /** The member who added or promoted them; null when the operator did (their rights count at once). */
  role_granted_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface SecurityLogRow {
  id: string;
  account_id: string;
  actor: string;
  action: string;
  details: string;
  created_at: string;
}

export interface MetaRow {
  key: string;
  value: string;
}

const ts = { type: 'varchar' as const, length: 30 };

export const AccountEntity = new EntitySchema<AccountRow>({
  name: 'Account',
  tableName: 'accounts',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    name: { type: 'varchar', length: 200 },
    status: { type: 'varchar', length: 16 },
    verified: { type: 'boolean' },
    platform_fee_percent: { type: 'varchar', length: 40 },
    default_fiat: { type: 'varchar', length: 8, nullable: true },
    invoice_ttl_minutes: { type: 'integer' },
    underpayment_tolerance_percent: { type: 'varchar', length: 40 },
    dual_approval_threshold: { type: 'varchar', length: 60, nullable: true },
    daily_withdrawal_limit: { type: 'varchar', length: 60, nullable: true },
    withdrawal_whitelist_enforced: { type: 'boolean' },
    created_at: ts,
    updated_at: ts,
  },
});

export const MemberEntity = new EntitySchema<MemberRow>({
  name: 'Member',
  tableName: 'members',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    email: { type: 'varchar', length: 254 },
    role: { type: 'varchar', length: 16 },
    status: { type: 'varchar', length: 16 },
    totp_secret_sealed: { type: 'text' },
    totp_last_step: { type: 'integer', nullable: true },
    role_granted_at: { ...ts, nullable: true },
    role_granted_by: { type: 'varchar', length: 36, nullable: true },
    created_at: ts,
    updated_at: ts,
  },
});

export const SecurityLogEntity = new EntitySchema<SecurityLogRow>({
  name: 'SecurityLog',
  tableName: 'security_log',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    actor: { type: 'varchar', length: 254 },
    action: { type: 'varchar', length: 64 },
    details: { type: 'text' },
    created_at: ts,
  },
});

export const MetaEntity = new EntitySchema<MetaRow>({
  name: 'Meta',
  tableName: 'meta',
  columns: {
    key: { type: 'varchar', length: 64, primary: true },
    value: { type: 'text' },
  },
});
