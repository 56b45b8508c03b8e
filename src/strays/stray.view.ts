import { z } from 'zod';
import type { Catalog } from '../catalog/coins';
import type { StrayRow } from '../db/entities/stray';
import { decimal, timestamp, uuid, type Same } from '../shared/schema';
import { STRAY_STATUSES } from './stray.state';

/** A stray payment as the API shows it (PRODUCT §17). */
export const StraySchema = z
  .object({
    id: uuid(),
    coin_id: uuid(),
    ticker: z.string().nullable(),
    /** The network it arrived on. */
    network: z.string().nullable(),
    amount: decimal(),
    txid: z.string(),
    to_address: z.string(),
    invoice_id: uuid().nullable(),
    address_id: uuid().nullable(),
    status: z.enum(STRAY_STATUSES),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Stray' });
export type StrayView = z.infer<typeof StraySchema>;

const sameStatus: Same<StrayView['status'], StrayRow['status']> = true;
void sameStatus;

export function presentStray(catalog: Catalog, r: StrayRow): StrayView {
  const coin = catalog.coin(r.coin_id);
  return {
    id: r.id,
    coin_id: r.coin_id,
    ticker: coin?.ticker ?? null,
    network: coin?.network ?? null,
    amount: r.amount,
    txid: r.txid,
    to_address: r.to_address,
    invoice_id: r.invoice_id,
    address_id: r.address_id,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
