import type { Store } from '../db/store';
import { newRouter, type AppRouter } from '../http/context';
import { verifyLedger } from '../ledger/verify';

/** `coinkeep ledger verify`: recomputes every balance from the journal on one snapshot and compares. */
export function ledgerAdminRoutes(store: Store): AppRouter {
  const r = newRouter('/admin');
  r.get('/ledger/verify', async (ctx) => {
    ctx.body = await store.snapshot((em) => verifyLedger(em));
  });
  return r;
}
