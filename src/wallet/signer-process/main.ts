import { Catalog } from '../../catalog/coins';
import type { Config } from '../../config/schema';
import { ensureDataDir, loadMasterKey, Sealer } from '../../db/seal';
import { Store } from '../../db/store';
import { RateEngine } from '../../rates/engine';
import { systemClock, type Clock } from '../../shared/clock';
import { silentLogger, type Logger } from '../../shared/logger';
import { skipBranchesTo } from '../address.service';
import type { SeedStatus } from '../seed';
import { startSignerServer, type SignerServer } from './server';
import { ensureSeed, loadSigner, loadSignerKey, moveLegacySeed } from './vault';
import path from 'node:path';

/**
 * The signer process's entry points (PRODUCT §18): `coinkeep signer` (run), `coinkeep signer
 * backup` and the seed's part of `coinkeep init`. The only way into src/wallet/signer-process from
 * outside it (the import check lets the CLI and nothing else of src/ import this file).
 */

export interface RunSignerOptions {
  socketPath: string;
  logger?: Logger;
  clock?: Clock;
  /** Keep the hourly journal in memory only (tests running the signer inside their process). */
  memoryJournal?: boolean;
}

/** Opens the seed with the signer key (moving an old one first), starts its rate engine and listens. */
export async function runSigner(config: Config, opts: RunSignerOptions): Promise<SignerServer> {
  const logger = opts.logger ?? silentLogger;
  const clock = opts.clock ?? systemClock;
  ensureDataDir(config.data_dir);
  const sealer = new Sealer(loadSignerKey(config.data_dir, { create: false }));
  const store = await Store.open({ url: config.database.url });
  let signer;
  try {
    await moveLegacySeed(store, sealer, config.data_dir, logger);
    signer = await loadSigner(store, sealer, logger);
  } finally {
    await store.close();
  }
  const catalog = new Catalog(config.chains, config.fiat);
  const tickers = [...new Set(catalog.coins().map((c) => c.ticker))];
  const rates = new RateEngine({ sources: config.rates, tickers, fiats: [config.fiat.default], clock, logger });
  const limited = Object.keys(config.signer.max_per_hour).length > 0;
  const refresh = () => rates.refresh().catch((err: unknown) => logger.warn('signer rate refresh failed', { error: String(err) }));
  if (limited) await refresh();
  const timer = limited ? setInterval(() => void refresh(), config.rates.refresh_seconds * 1000) : null;
  timer?.unref();
  const server = await startSignerServer({
    config,
    signer,
    socketPath: opts.socketPath,
    logger,
    clock,
    rate: (ticker) => rates.rate(ticker, config.fiat.default).rate,
    journalFile: opts.memoryJournal ? null : path.join(config.data_dir, 'signer.journal'),
  });
  return {
    ...server,
    close: async () => {
      if (timer) clearInterval(timer);
      await server.close();
    },
  };
}

/** `coinkeep signer backup`: the words, read with the signer key in the operator's own shell (never through the daemon). */
export async function signerBackupWords(config: Config): Promise<{ fingerprint: string; words: string }> {
  const sealer = new Sealer(loadSignerKey(config.data_dir, { create: false }));
  const store = await Store.open({ url: config.database.url });
  try {
    await moveLegacySeed(store, sealer, config.data_dir);
    const signer = await loadSigner(store, sealer);
    return { fingerprint: signer.fingerprint, words: signer.backupWords() };
  } finally {
    await store.close();
  }
}

/**
 * Stores the wallet seed when the database has none (init, dev, tests), sealed under the signer key
 * (made here when missing, as the master key is: `coinkeep init` makes both): a fresh mnemonic, or the backup words of a restore. An old seed under
 * the master key is moved first. Opens the store itself (no daemon is running).
 */
export async function prepareSeed(
  config: Config,
  mnemonic?: string,
  opts: { firstBranch?: number } = {},
): Promise<{ status: SeedStatus; fingerprint: string; next_branch?: number }> {
  loadMasterKey(config.data_dir, { create: true });
  const sealer = new Sealer(loadSignerKey(config.data_dir, { create: true }));
  const store = await Store.open({ url: config.database.url });
  try {
    await store.migrate();
    await moveLegacySeed(store, sealer, config.data_dir);
    const seed = await ensureSeed(store, sealer, mnemonic);
    if (opts.firstBranch === undefined) return seed;
    return { ...seed, next_branch: await skipBranchesTo(store, opts.firstBranch) };
  } finally {
    await store.close();
  }
}
