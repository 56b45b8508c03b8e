import type { EntityManager } from 'typeorm';
import type { Catalog, Coin } from '../catalog/coins';
import type { AddressRow } from '../db/entities/chain';
import { inList, rawQuery } from '../db/raw';
import type { Store } from '../db/store';

/** A pending withdrawal of an account chain, as a rail's `prepare` looks at it. */
export interface PendingPayout {
  id: string;
  account_id: string;
  coin_id: string;
  to_address: string;
  amount: string;
}

/**
 * What an account chain's rail prepares for (EVM and Tron pay out from each account's treasury):
 * the chain's coins, its pending withdrawals, and the treasury of each account they belong to
 * (recorded on first use, so read in a write transaction).
 */
export async function pendingPayouts(
  store: Store,
  catalog: Catalog,
  chainId: string,
  treasuryOf: (em: EntityManager, accountId: string) => Promise<AddressRow>,
): Promise<{ coins: Coin[]; pending: PendingPayout[]; treasuries: Array<readonly [string, AddressRow]> }> {
  const coins = catalog.coins().filter((c) => c.chain_id === chainId);
  const list = inList(
    store.read,
    coins.map((c) => c.id),
    1,
  );
  const pending = await rawQuery<PendingPayout>(
    store.read,
    `SELECT id, account_id, coin_id, to_address, amount FROM withdrawals WHERE status = 'pending' AND coin_id ${list.sql}`,
    list.params,
  );
  const accounts = [...new Set(pending.map((w) => w.account_id))];
  const treasuries = await store.write(async (em) => Promise.all(accounts.map(async (a) => [a, await treasuryOf(em, a)] as const)));
  return { coins, pending, treasuries };
}
