import { EntitySchema } from 'typeorm';

/** What became of a stray payment (PRODUCT §17; `reverted`: docs/decisions.md). */
export type StrayStatus = 'open' | 'credited' | 'refunded' | 'reverted';

/**
 * A configured coin that reached an invoice or static address of the wallet where it was not
 * asked for (PRODUCT §17), recorded with its chain transfer; never credited on its own.
 */
export interface StrayRow {
  id: string;
  account_id: string;
  /** The chain it arrived on (which may not be the address row's). */
  chain_id: string;
  coin_id: string;
  transfer_id: string;
  amount: string;
  txid: string;
  to_address: string;
  /** The invoice whose address it reached; null for a static address. */
  invoice_id: string | null;
  /** The static address it reached; null for an invoice's. */
  address_id: string | null;
  status: StrayStatus;
  created_at: string;
  updated_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };

export const StrayEntity = new EntitySchema<StrayRow>({
  name: 'Stray',
  tableName: 'strays',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    chain_id: { type: 'varchar', length: 32 },
    coin_id: { type: 'varchar', length: 36 },
    transfer_id: { type: 'varchar', length: 36 },
    amount: { type: 'varchar', length: 80 },
    txid: { type: 'varchar', length: 128 },
    to_address: { type: 'varchar', length: 128 },
    invoice_id: { type: 'varchar', length: 36, nullable: true },
    address_id: { type: 'varchar', length: 36, nullable: true },
    status: { type: 'varchar', length: 16 },
    created_at: ts,
    updated_at: ts,
  },
});
