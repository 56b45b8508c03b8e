import type { Catalog } from '../catalog/coins';
import type { TransactionRow } from '../db/entities/money';
import type { StaticAddressRow, StaticAddressStatus } from '../db/entities/static-address';

/** A static address as the API shows it (PRODUCT §7). */
export interface StaticAddressView {
  id: string;
  customer_id: string;
  coin_id: string;
  ticker: string | null;
  network: string | null;
  address: string;
  label: string | null;
  status: StaticAddressStatus;
  archived_at: string | null;
  last_deposit_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One deposit of an address's history, and of the `deposit.*` events. */
export interface DepositView {
  transaction_id: string;
  txid: string | null;
  coin_id: string;
  amount: string;
  fee: string | null;
  net_amount: string | null;
  status: TransactionRow['status'];
  confirmations: number | null;
  created_at: string;
}

/** A deposit's transaction row with its chain transfer's confirmations (a string on PostgreSQL). */
export type DepositRow = TransactionRow & { confirmations: number | string | null };

export const STATIC_ADDRESS_FIELDS = [
  'id', 'customer_id', 'coin_id', 'ticker', 'network', 'address', 'label', 'status', 'archived_at', 'last_deposit_at', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof StaticAddressView>;

export function presentStaticAddress(catalog: Catalog, r: StaticAddressRow): StaticAddressView {
  const coin = catalog.coin(r.coin_id);
  return {
    id: r.id,
    customer_id: r.customer_id,
    coin_id: r.coin_id,
    ticker: coin?.ticker ?? null,
    network: coin?.network ?? null,
    address: r.address,
    label: r.label,
    status: r.status,
    archived_at: r.archived_at,
    last_deposit_at: r.last_deposit_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentDeposit(r: DepositRow): DepositView {
  return {
    transaction_id: r.id,
    txid: r.txid,
    coin_id: r.coin_id,
    amount: r.amount,
    fee: r.fee,
    net_amount: r.net_amount,
    status: r.status,
    confirmations: r.confirmations === null || r.confirmations === undefined ? null : Number(r.confirmations),
    created_at: r.created_at,
  };
}
