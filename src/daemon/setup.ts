import type { Config } from '../config/schema';
import { loadMasterKey, Sealer } from '../db/seal';
import { bindSealedValues } from '../db/sealed-values';
import { Store } from '../db/store';
import { skipBranchesTo } from '../wallet/address.service';
import { ensureSeed, type SeedStatus } from '../wallet/seed';

/**
 * Stores the wallet seed when the database has none (init, dev): a fresh mnemonic, or the backup
 * words of a restore. Opens the store itself (the daemon is not running yet).
 */
export async function prepareSeed(
  config: Config,
  mnemonic?: string,
  opts: { firstBranch?: number } = {},
): Promise<{ status: SeedStatus; fingerprint: string; next_branch?: number }> {
  const sealer = new Sealer(loadMasterKey(config.data_dir, { create: true }));
  const store = await Store.open({ url: config.database.url });
  try {
    await store.migrate();
    await bindSealedValues(store, sealer);
    const seed = await ensureSeed(store, sealer, mnemonic);
    if (opts.firstBranch === undefined) return seed;
    return { ...seed, next_branch: await skipBranchesTo(store, opts.firstBranch) };
  } finally {
    await store.close();
  }
}
