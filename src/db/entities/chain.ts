import { EntitySchema } from 'typeorm';

/**
 * A derived deposit address. Every index handed out is recorded here in the same transaction that
 * allocates it, so an index is never reused (also after a crash between derivation and commit:
 * then neither the index nor the address exist).
 */
export interface AddressRow {
  id: string;
  account_id: string;
  /** The config chain id (`ethereum`, `bitcoin`). */
  chain_id: string;
  /** The coin the address was issued for (invoice coin, or a static address's coin). */
  coin_id: string;
  /** Canonical text form: bech32 lower-case, EVM EIP-55 checksummed, Tron base58. */
  address: string;
  derivation_path: string;
  derivation_index: number;
  purpose: 'invoice' | 'static';
  invoice_id: string | null;
  status: 'active' | 'archived';
  created_at: string;
  updated_at: string;
}

export type TransferStatus = 'seen' | 'confirmed' | 'reverted';

/**
 * Every transfer a chain made to a watched address, as the chain core observed it. Unique by
 * (chain_id, txid, coin_id, output_index): an output (vout) or a log index (ERC-20), 0 for an EVM
 * native value transfer.
 */
export interface ChainTransferRow {
  id: string;
  chain_id: string;
  coin_id: string;
  txid: string;
  output_index: number;
  address: string;
  address_id: string;
  account_id: string;
  /** Decimal string in coin units. */
  amount: string;
  /** null while only in the mempool. */
  block_height: number | null;
  block_hash: string | null;
  confirmations: number;
  status: TransferStatus;
  seen_at: string;
  confirmed_at: string | null;
  reverted_at: string | null;
  created_at: string;
  updated_at: string;
}

const ts = { type: 'varchar' as const, length: 30 };

export const AddressEntity = new EntitySchema<AddressRow>({
  name: 'Address',
  tableName: 'addresses',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    account_id: { type: 'varchar', length: 36 },
    chain_id: { type: 'varchar', length: 32 },
    coin_id: { type: 'varchar', length: 36 },
    address: { type: 'varchar', length: 128 },
    derivation_path: { type: 'varchar', length: 64 },
    derivation_index: { type: 'integer' },
    purpose: { type: 'varchar', length: 16 },
    invoice_id: { type: 'varchar', length: 36, nullable: true },
    status: { type: 'varchar', length: 16 },
    created_at: ts,
    updated_at: ts,
  },
});

export const ChainTransferEntity = new EntitySchema<ChainTransferRow>({
  name: 'ChainTransfer',
  tableName: 'chain_transfers',
  columns: {
    id: { type: 'varchar', length: 36, primary: true },
    chain_id: { type: 'varchar', length: 32 },
    coin_id: { type: 'varchar', length: 36 },
    txid: { type: 'varchar', length: 128 },
    output_index: { type: 'integer' },
    address: { type: 'varchar', length: 128 },
    address_id: { type: 'varchar', length: 36 },
    account_id: { type: 'varchar', length: 36 },
    amount: { type: 'varchar', length: 80 },
    block_height: { type: 'integer', nullable: true },
    block_hash: { type: 'varchar', length: 128, nullable: true },
    confirmations: { type: 'integer' },
    status: { type: 'varchar', length: 16 },
    seen_at: ts,
    confirmed_at: { ...ts, nullable: true },
    reverted_at: { ...ts, nullable: true },
    created_at: ts,
    updated_at: ts,
  },
});
