import type { Catalog } from '../catalog/coins';
import type { HoldingsReader } from '../chains/types';
import type { Store } from '../db/store';
import { newRouter, type AppRouter } from '../http/context';
import { reconcile } from '../ledger/reconcile';
import { verifyLedger } from '../ledger/verify';

export interface LedgerAdminDeps {
  store: Store;
  catalog: Catalog;
  holdingsOf: (chainId: string) => HoldingsReader | null;
}

/**
 * `coinkeep ledger verify`: recomputes every balance from the journal on one snapshot and compares.
 * `coinkeep ledger reconcile`: the books against what the nodes show the wallet holds.
 */
export function ledgerAdminRoutes(deps: LedgerAdminDeps): AppRouter {
  const r = newRouter('/admin');
  r.get('/ledger/verify', async (ctx) => {
    ctx.body = await deps.store.snapshot((em) => verifyLedger(em));
  });
  r.get('/ledger/reconcile', async (ctx) => {
    ctx.body = await reconcile(deps);
  });
  return r;
}
