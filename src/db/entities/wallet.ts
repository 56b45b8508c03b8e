import { EntitySchema } from 'typeorm';

/**
 * Each merchant account's wallet branch: the BIP44/BIP84 `account'` level of its addresses on
 * every chain (m/purpose'/coin'/branch'/0/index), handed out in order on the account's first address.
 */
export interface WalletBranchRow {
  account_id: string;
  branch: number;
  created_at: string;
}

/**
 * Monotonic counters, moved only inside the write transaction that uses the value: `branch` (the
 * next wallet branch) and `index:<chain id>:<account id>` (the next address index on a chain).
 */
export interface WalletCounterRow {
  name: string;
  next_value: number;
}

export const WalletBranchEntity = new EntitySchema<WalletBranchRow>({
  name: 'WalletBranch',
  tableName: 'wallet_branches',
  columns: {
    account_id: { type: 'varchar', length: 36, primary: true },
    branch: { type: 'integer' },
    created_at: { type: 'varchar', length: 30 },
  },
});

export const WalletCounterEntity = new EntitySchema<WalletCounterRow>({
  name: 'WalletCounter',
  tableName: 'wallet_counters',
  columns: {
    name: { type: 'varchar', length: 100, primary: true },
    next_value: { type: 'integer' },
  },
});
