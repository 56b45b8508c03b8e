import { generateMnemonic, validateMnemonic } from 'bip39';
import { MetaEntity } from '../db/entities/team';
import type { Sealer } from '../db/seal';
import { cells } from '../db/sealed-values';
import type { Store } from '../db/store';
import { UserError } from '../shared/errors';
import { silentLogger, type Logger } from '../shared/logger';
import { WalletSigner } from './signer';

/**
 * The wallet seed lives in the store's `meta` table, sealed under the master key (AES-256-GCM,
 * bound to its cell `meta.value` of row `wallet_seed`): it travels with the addresses it derived (one database backup
 * holds both) and a database copy without the master key does not open it.
 */
export const SEED_META_KEY = 'wallet_seed';

/** Normalises a mnemonic as typed (case, spaces) and checks its words and checksum (BIP39, English). */
export function normaliseMnemonic(text: string): string | null {
  const words = text.normalize('NFKD').trim().toLowerCase().split(/\s+/).filter(Boolean);
  const m = words.join(' ');
  return [12, 15, 18, 21, 24].includes(words.length) && validateMnemonic(m) ? m : null;
}

/** A fresh 24-word BIP39 mnemonic (256 bits of entropy). */
export const newMnemonic = (): string => generateMnemonic(256);

export type SeedStatus = 'created' | 'kept' | 'restored';

/**
 * Stores a seed when the store has none: `mnemonic` (a restore, or the tests' fixed one) or a
 * fresh one. A stored seed is kept; restoring a different one over it is refused.
 */
export async function ensureSeed(store: Store, sealer: Sealer, mnemonic?: string): Promise<{ status: SeedStatus; fingerprint: string }> {
  let words: string | undefined;
  if (mnemonic !== undefined) {
    const m = normaliseMnemonic(mnemonic);
    if (!m) throw new UserError('not a valid BIP39 mnemonic (12 to 24 English words with a correct checksum)');
    words = m;
  }
  const fresh = words ?? newMnemonic();
  const sealed = sealer.seal(fresh, cells.walletSeed());
  const value = await store.write(async (em) => {
    await em.createQueryBuilder().insert().into(MetaEntity).values({ key: SEED_META_KEY, value: sealed }).orIgnore().execute();
    return (await em.findOneByOrFail(MetaEntity, { key: SEED_META_KEY })).value;
  });
  const stored = openSeed(value, sealer, silentLogger);
  // The sealed text is unique (random IV): equal means this call stored it.
  if (value === sealed) return { status: words ? 'restored' : 'created', fingerprint: stored.fingerprint };
  if (words !== undefined && stored.backupWords() !== words)
    throw new UserError(`a different wallet seed is already stored (fingerprint ${stored.fingerprint}); it is kept`);
  return { status: 'kept', fingerprint: stored.fingerprint };
}

/**
 * The daemon's signer at start: missing or unreadable seed → one clear line, no secret in it. The
 * seed stays sealed in memory; the signer opens it at each use.
 */
export async function loadSigner(store: Store, sealer: Sealer, logger: Logger = silentLogger): Promise<WalletSigner> {
  const row = await store.read.findOneBy(MetaEntity, { key: SEED_META_KEY });
  if (!row) throw new UserError('wallet seed missing: run `coinkeep init` (or `coinkeep init --restore` with your backup words)');
  return openSeed(row.value, sealer, logger);
}

function openSeed(sealed: string, sealer: Sealer, logger: Logger): WalletSigner {
  const words = (): string => {
    let plain: string;
    try {
      plain = sealer.open(sealed, cells.walletSeed());
    } catch {
      throw new UserError('wallet seed cannot be opened: wrong master key or damaged seed row');
    }
    const m = normaliseMnemonic(plain);
    if (!m) throw new UserError('wallet seed is damaged: the stored words are not a valid mnemonic');
    return m;
  };
  return new WalletSigner(words, logger);
}
