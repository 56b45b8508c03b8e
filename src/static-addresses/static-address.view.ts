import { z } from 'zod';
import type { Catalog } from '../catalog/coins';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';
import type { TransactionRow } from '../db/entities/money';
import type { StaticAddressRow, StaticAddressStatus } from '../db/entities/static-address';

/** A static address as the API shows it (PRODUCT §7). */
export const StaticAddressSchema = z
  .object({
    id: uuid(),
    customer_id: z.string(),
    coin_id: uuid(),
    ticker: z.string().nullable(),
    network: z.string().nullable(),
    address: z.string(),
    label: z.string().nullable(),
    status: z.enum(['active', 'archived']),
    archived_at: timestamp().nullable(),
    last_deposit_at: timestamp().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'StaticAddress' });
export type StaticAddressView = z.infer<typeof StaticAddressSchema>;

/** One deposit of an address's history, and of the `deposit.*` events. */
export const DepositSchema = z
  .object({
    transaction_id: uuid(),
    txid: z.string().nullable(),
    coin_id: uuid(),
    amount: decimal(),
    fee: decimal().nullable(),
    net_amount: decimal().nullable(),
    status: z.enum(['pending', 'confirmed', 'reverted']),
    confirmations: z.number().int().nullable(),
    created_at: timestamp(),
  })
  .meta({ id: 'Deposit' });
export type DepositView = z.infer<typeof DepositSchema>;

/** GET /v1/addresses/{id}: the address with its latest deposits. */
export const StaticAddressWithDepositsSchema = StaticAddressSchema.extend({ deposits: z.array(DepositSchema) }).meta({ id: 'StaticAddressWithDeposits' });

const sameStatus: Same<StaticAddressView['status'], StaticAddressStatus> = true;
const sameDepositStatus: Same<DepositView['status'], TransactionRow['status']> = true;
void sameStatus;
void sameDepositStatus;

/** A deposit's transaction row with its chain transfer's confirmations (a string on PostgreSQL). */
export type DepositRow = TransactionRow & { confirmations: number | string | null };

export const STATIC_ADDRESS_FIELDS = [
  'id',
  'customer_id',
  'coin_id',
  'ticker',
  'network',
  'address',
  'label',
  'status',
  'archived_at',
  'last_deposit_at',
  'created_at',
  'updated_at',
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
