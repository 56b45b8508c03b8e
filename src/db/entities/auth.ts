import { EntitySchema } from 'typeorm';

export type KeyStatus = 'active' | 'disabled' | 'revoked';
export type WithdrawStatus = 'none' | 'pending' | 'granted';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  key_id: string;
  name: string;
  /** The environment the key was created on: mainnet or testnet. */
  network: string;
  permissions: string;
  withdraw_status: WithdrawStatus;
  withdraw_granted_by: string | null;
  /** JSON {requested_by, requested_at, ip_whitelist} of a pending withdraw request, else null. */
  withdraw_request: string | null;
  ip_whitelist: string;
  rate_limit_per_minute: number;
  status: KeyStatus;
  secret_sealed: string;
  secret_last4: string;
  secret_holder: string;
  secret_generation: number;
  rotation_required: boolean;
  previous_secret_sealed: string | null;
  previous_secret_holder: string | null;
  previous_secret_valid_until: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface IdempotencyRow {
  scope: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: string;
  /** null: kept permanently (withdrawal keys). */
  expires_at: string | null;
}

export interface ReplayRow {
  signature: string;
  expires_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };

export const ApiKeyEntity = new EntitySchema<ApiKeyRow>({
  name: 'ApiKey',
  tableName: 'api_keys',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    key_id: { type: 'varchar', length: 40 },
    name: { type: 'varchar', length: 200 },
    network: { type: 'varchar', length: 16 },
    permissions: { type: 'varchar', length: 200 },
    withdraw_status: { type: 'varchar', length: 16 },
    withdraw_granted_by: { type: 'varchar', length: 36, nullable: true },
    withdraw_request: { type: 'text', nullable: true },
    ip_whitelist: { type: 'text' },
    rate_limit_per_minute: { type: 'integer' },
    status: { type: 'varchar', length: 16 },
    secret_sealed: { type: 'text' },
    secret_last4: { type: 'varchar', length: 4 },
    secret_holder: { type: 'varchar', length: 36 },
    secret_generation: { type: 'integer' },
    rotation_required: { type: 'boolean' },
    previous_secret_sealed: { type: 'text', nullable: true },
    previous_secret_holder: { type: 'varchar', length: 36, nullable: true },
    previous_secret_valid_until: { ...ts, nullable: true },
    created_by: { type: 'varchar', length: 36 },
    created_at: ts,
    updated_at: ts,
  },
});

export const IdempotencyEntity = new EntitySchema<IdempotencyRow>({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  columns: {
    scope: { type: 'varchar', length: 80, primary: true },
    key: { type: 'varchar', length: 128, primary: true },
    fingerprint: { type: 'varchar', length: 64 },
    state: { type: 'varchar', length: 16 },
    response_status: { type: 'integer', nullable: true },
    response_body: { type: 'text', nullable: true },
    created_at: ts,
    expires_at: { ...ts, nullable: true },
  },
});

export const ReplayEntity = new EntitySchema<ReplayRow>({
  name: 'ReplaySignature',
  tableName: 'replay_signatures',
  columns: {
    signature: { type: 'varchar', length: 64, primary: true },
    expires_at: ts,
  },
});
