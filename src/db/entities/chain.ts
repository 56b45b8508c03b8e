import { EntitySchema } from 'typeorm';

/**
 * What an address is for: an invoice's, a static deposit address, an account's treasury (EVM and
 * Tron payouts), or Bitcoin change. The transfer router picks a transfer's handler by it.
 */
export type AddressPurpose = 'invoice' | 'static' | 'treasury' | 'change';

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
  purpose: AddressPurpose;
  invoice_id: string | null;
  status: 'active' | 'archived';
  created_at: string;
  updated_at: string;
}

/**
 * A transfer's purpose: its address row's, or `stray` (PRODUCT §17) when a configured coin reached
 * an invoice or static address where it was not asked for (another chain of the address's group, or
 * another coin than the address's): recorded, handed to the strays' handler, never credited on its own.
 */
export type TransferPurpose = AddressPurpose | 'stray';

export type TransferStatus = 'seen' | 'confirmed' | 'reverted';

/** Money reaching a wallet address, or the wallet's coins spent. */
export type TransferDirection = 'incoming' | 'outgoing';

/**
 * Every transfer a chain made to a watched address, and every spend of the wallet's coins, as the
 * chain core observed it. Unique by (chain_id, txid, coin_id, output_index, direction): incoming,
 * an output (vout) or a log index (ERC-20), 0 for an EVM native value transfer; outgoing, the
 * input's position among the transaction's inputs (Bitcoin), 0 for an EVM or Tron transaction.
 */
export interface ChainTransferRow {
  id: string;
  chain_id: string;
  coin_id: string;
  txid: string;
  output_index: number;
  direction: TransferDirection;
  /** The address row's purpose (AddressPurpose), copied when the transfer is first seen; `stray` (TransferPurpose). */
  purpose: TransferPurpose;
  /** The wallet address paid (incoming), or spent from (outgoing). */
  address: string;
  address_id: string;
  account_id: string;
  /**
   * Decimal string in coin units. Outgoing: the spent output's value (Bitcoin); 0 for an EVM or
   * Tron transaction (its value is the sender's business: a payout knows what it sent).
   */
  amount: string;
  /** Outgoing (Bitcoin): the row of the received output this input spends. */
  spent_transfer_id: string | null;
  /** Outgoing (EVM, Tron): the sender's nonce. */
  nonce: number | null;
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
    // The defaults of migration 0013, which gave rows written before it their values.
    direction: { type: 'varchar', length: 8, default: 'incoming' },
    purpose: { type: 'varchar', length: 16, default: 'invoice' },
    address: { type: 'varchar', length: 128 },
    address_id: { type: 'varchar', length: 36 },
    account_id: { type: 'varchar', length: 36 },
    amount: { type: 'varchar', length: 80 },
    spent_transfer_id: { type: 'varchar', length: 36, nullable: true },
    nonce: { type: 'integer', nullable: true },
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
