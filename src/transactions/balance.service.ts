import { z } from 'zod';
import { decimal, uuid } from '../shared/schema';
import type { Catalog } from '../catalog/coins';
import type { Store } from '../db/store';
import { accountBook, type Ledger } from '../ledger/ledger';

/** One coin's balance as GET /v1/balances shows it (PRODUCT §9). */
export const BalanceSchema = z
  .object({
    coin_id: uuid(),
    ticker: z.string().nullable(),
    network: z.string().nullable(),
    available: decimal(),
    hold: decimal(),
    total: decimal(),
  })
  .meta({ id: 'Balance' });
export type BalanceView = z.infer<typeof BalanceSchema>;

/**
 * The account's balances from the ledger: every coin of the catalogue (zero when nothing moved yet)
 * and any coin the account's book holds that the configuration no longer lists, ordered by coin id.
 */
export class BalanceService {
  constructor(
    private readonly store: Store,
    private readonly ledger: Ledger,
    private readonly catalog: Catalog,
  ) {}

  async list(accountId: string): Promise<BalanceView[]> {
    const held = await this.ledger.balances(this.store.read, accountBook(accountId));
    const byCoin = new Map(held.map((b) => [b.coin_id, b]));
    const ids = new Set([...this.catalog.coins().map((c) => c.id), ...byCoin.keys()]);
    return [...ids].sort().map((id) => {
      const coin = this.catalog.coin(id);
      const b = byCoin.get(id);
      const available = b?.available.toString() ?? '0';
      const hold = b?.hold.toString() ?? '0';
      return {
        coin_id: id,
        ticker: coin?.ticker ?? null,
        network: coin?.network ?? null,
        available,
        hold,
        total: b ? b.available.plus(b.hold).toString() : '0',
      };
    });
  }
}
