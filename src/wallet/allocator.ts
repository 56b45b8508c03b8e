import type { EntityManager } from 'typeorm';
import type { AddressRow } from '../db/entities/chain';

export interface AllocateRequest {
  accountId: string;
  /** Catalogue coin id; its chain decides the family and the derivation branch. */
  coinId: string;
  purpose: AddressRow['purpose'];
  invoiceId?: string | null;
}

/**
 * Hands out deposit addresses (the wallet's side; invoices and static addresses call it). It runs
 * inside the caller's write transaction: the index, the address row and the caller's own rows commit
 * together, so an index is never reused and never lost. After commit the address is watched.
 */
export interface AddressAllocator {
  allocate(em: EntityManager, req: AllocateRequest): Promise<AddressRow>;
}
