import { generateMnemonic, validateMnemonic } from 'bip39';

/**
 * Where the wallet seed was stored before the signer process existed: the `meta` row `wallet_seed`,
 * sealed under the master key. The signer moves it to its own row under its own key at its first
 * start (signer-process/vault.ts); nothing else opens it.
 */
export const LEGACY_SEED_META_KEY = 'wallet_seed';

/** Normalises a mnemonic as typed (case, spaces) and checks its words and checksum (BIP39, English). */
export function normaliseMnemonic(text: string): string | null {
  const words = text.normalize('NFKD').trim().toLowerCase().split(/\s+/).filter(Boolean);
  const m = words.join(' ');
  return [12, 15, 18, 21, 24].includes(words.length) && validateMnemonic(m) ? m : null;
}

/** A fresh 24-word BIP39 mnemonic (256 bits of entropy). */
export const newMnemonic = (): string => generateMnemonic(256);

export type SeedStatus = 'created' | 'kept' | 'restored';
