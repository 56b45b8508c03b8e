import path from 'node:path';
import { MetaEntity } from '../../db/entities/team';
import { loadKeyFile, loadMasterKey, Sealer, type SealedCell } from '../../db/seal';
import { cells } from '../../db/sealed-values';
import type { Store } from '../../db/store';
import { UserError } from '../../shared/errors';
import { silentLogger, type Logger } from '../../shared/logger';
import { LEGACY_SEED_META_KEY, newMnemonic, normaliseMnemonic, type SeedStatus } from '../seed';
import { WalletSigner } from '../signer';

/**
 * The seed's vault (PRODUCT §18): the wallet seed lives in the store's `meta` table under
 * `signer_seed`, sealed (AES-256-GCM, bound to its cell) under the signer's own key, which only the
 * signer process reads. The master key, which the daemon serving HTTP holds, does not open it. Only
 * src/wallet/signer-process may import this file (the import check enforces it).
 */
export const SIGNER_SEED_META_KEY = 'signer_seed';
const seedCell = (): SealedCell => ({ table: 'meta', column: 'value', row: SIGNER_SEED_META_KEY });

export const signerKeyPath = (dataDir: string): string => path.join(dataDir, 'signer.key');

/** The signer's key: env COINKEEP_SIGNER_KEY (base64url or hex of 32 bytes) or `<data_dir>/signer.key` (made with `create`). */
export function loadSignerKey(dataDir: string, opts: { create: boolean }): Buffer {
  return loadKeyFile(dataDir, signerKeyPath(dataDir), 'COINKEEP_SIGNER_KEY', opts, {
    missing: (file) => new UserError(`signer key ${file} not found (run: coinkeep init)`),
    size: (where) => new UserError(`${where}: the signer key must be 32 bytes`),
  });
}

/**
 * Moves a seed stored before the signer existed (`wallet_seed`, sealed under the master key) to
 * `signer_seed` under the signer's key, and deletes the old row, in one transaction: run by the
 * signer at its start and by `coinkeep init` (docs/decisions.md, "Custody (issue 36)"). Needs the
 * master key only while an old row is there. Returns whether it moved one.
 */
export async function moveLegacySeed(store: Store, signerSealer: Sealer, dataDir: string, logger: Logger = silentLogger): Promise<boolean> {
  const legacy = await store.read.findOneBy(MetaEntity, { key: LEGACY_SEED_META_KEY });
  if (!legacy) return false;
  let master: Sealer;
  try {
    master = new Sealer(loadMasterKey(dataDir, { create: false }));
  } catch {
    throw new UserError(
      'the wallet seed is still sealed under the master key: start the signer once where the master key can be read, to seal it under the signer key',
    );
  }
  let plain: string;
  try {
    plain = legacy.value.startsWith('v1.') ? master.openUnbound(legacy.value, 'wallet-seed') : master.open(legacy.value, cells.walletSeed());
  } catch {
    throw new UserError('wallet seed cannot be opened: wrong master key or damaged seed row');
  }
  const words = normaliseMnemonic(plain);
  if (!words) throw new UserError('wallet seed is damaged: the stored words are not a valid mnemonic');
  await store.write(async (em) => {
    const already = await em.findOneBy(MetaEntity, { key: SIGNER_SEED_META_KEY });
    if (already) {
      if (openWords(already.value, signerSealer) !== words)
        throw new UserError('two different wallet seeds are stored (signer_seed and wallet_seed): nothing moved');
    } else {
      await em.insert(MetaEntity, { key: SIGNER_SEED_META_KEY, value: signerSealer.seal(words, seedCell()) });
    }
    await em.delete(MetaEntity, { key: LEGACY_SEED_META_KEY });
  });
  logger.warn('wallet seed sealed under the signer key (the master key no longer opens it): back up signer.key with master.key');
  return true;
}

/**
 * Stores a seed when the store has none: `mnemonic` (a restore, or the tests' fixed one) or a
 * fresh one. A stored seed is kept; restoring a different one over it is refused.
 */
export async function ensureSeed(store: Store, signerSealer: Sealer, mnemonic?: string): Promise<{ status: SeedStatus; fingerprint: string }> {
  let words: string | undefined;
  if (mnemonic !== undefined) {
    const m = normaliseMnemonic(mnemonic);
    if (!m) throw new UserError('not a valid BIP39 mnemonic (12 to 24 English words with a correct checksum)');
    words = m;
  }
  const fresh = words ?? newMnemonic();
  const sealed = signerSealer.seal(fresh, seedCell());
  const value = await store.write(async (em) => {
    await em.createQueryBuilder().insert().into(MetaEntity).values({ key: SIGNER_SEED_META_KEY, value: sealed }).orIgnore().execute();
    return (await em.findOneByOrFail(MetaEntity, { key: SIGNER_SEED_META_KEY })).value;
  });
  const stored = signerOf(value, signerSealer, silentLogger);
  // The sealed text is unique (random IV): equal means this call stored it.
  if (value === sealed) return { status: words ? 'restored' : 'created', fingerprint: stored.fingerprint };
  if (words !== undefined && stored.backupWords() !== words)
    throw new UserError(`a different wallet seed is already stored (fingerprint ${stored.fingerprint}); it is kept`);
  return { status: 'kept', fingerprint: stored.fingerprint };
}

/** The signer at its start: missing or unreadable seed → one clear line, no secret in it. The seed stays sealed in memory; the signer opens it at each use. */
export async function loadSigner(store: Store, signerSealer: Sealer, logger: Logger = silentLogger): Promise<WalletSigner> {
  const row = await store.read.findOneBy(MetaEntity, { key: SIGNER_SEED_META_KEY });
  if (!row) throw new UserError('wallet seed missing: run `coinkeep init` (or `coinkeep init --restore` with your backup words)');
  return signerOf(row.value, signerSealer, logger);
}

function openWords(sealed: string, sealer: Sealer): string {
  let plain: string;
  try {
    plain = sealer.open(sealed, seedCell());
  } catch {
    throw new UserError('wallet seed cannot be opened: wrong signer key or damaged seed row');
  }
  const m = normaliseMnemonic(plain);
  if (!m) throw new UserError('wallet seed is damaged: the stored words are not a valid mnemonic');
  return m;
}

function signerOf(sealed: string, sealer: Sealer, logger: Logger): WalletSigner {
  return new WalletSigner(() => openWords(sealed, sealer), logger);
}
