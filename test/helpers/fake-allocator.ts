import type { EntityManager } from 'typeorm';
import { AddressEntity, type AddressRow } from '../../src/db/entities/chain';
import { newId } from '../../src/shared/ids';
import type { AddressAllocator, AllocateRequest } from '../../src/wallet/allocator';

/**
 * Stands in for the wallet: records each allocation in `addresses` (inside the caller's
 * transaction, as the real one does) with a made-up address, unique per allocator.
 */
export class FakeAllocator implements AddressAllocator {
  private next = 0;
  readonly prefix = `fake${Math.random().toString(36).slice(2, 8)}`;

  /** `chainOf` maps a coin id to its chain id. */
  constructor(private readonly chainOf: (coinId: string) => string) {}

  async allocate(em: EntityManager, req: AllocateRequest): Promise<AddressRow> {
    const index = this.next++;
    const now = new Date().toISOString();
    const chain = this.chainOf(req.coinId);
    const row: AddressRow = {
      id: newId(),
      account_id: req.accountId,
      chain_id: chain,
      coin_id: req.coinId,
      address: `${this.prefix}-${chain}-${index}`,
      derivation_path: `m/fake/${index}`,
      derivation_index: index,
      purpose: req.purpose,
      invoice_id: req.invoiceId ?? null,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    await em.insert(AddressEntity, row);
    return row;
  }
}
