import { BIP32Factory, type BIP32Interface } from 'bip32';
import { mnemonicToSeedSync, validateMnemonic } from 'bip39';
import * as ecc from 'tiny-secp256k1';
import { addressPath, receiveBranchPath, type AddressScheme } from '../chains/derivation';
import { childPublicKey, type BranchKey, type PublicBranchKey } from './child-key';

const bip32 = BIP32Factory(ecc);

/** Normalises a mnemonic as typed (case, spaces) and checks its words and checksum (BIP39, English). */
export function normaliseMnemonic(text: string): string | null {
  const words = text.normalize('NFKD').trim().toLowerCase().split(/\s+/).filter(Boolean);
  const m = words.join(' ');
  return [12, 15, 18, 21, 24].includes(words.length) && validateMnemonic(m) ? m : null;
}

export interface DerivedAddress {
  address: string;
  path: string;
}

/**
 * The wallet's HD root (BIP32 from the BIP39 seed, no passphrase). Receive-branch nodes are cached
 * so an address costs one child derivation. The mnemonic leaves this object only for a backup.
 */
export class HdWallet {
  private readonly root: BIP32Interface;
  private readonly branches = new Map<string, BranchKey>();

  constructor(private readonly words: string) {
    this.root = bip32.fromSeed(mnemonicToSeedSync(words));
  }

  /** The BIP32 master key fingerprint (8 hex digits): names the seed without revealing it. */
  get fingerprint(): string {
    return Buffer.from(this.root.fingerprint).toString('hex');
  }

  /** For `coinkeep wallet backup` only. */
  mnemonic(): string {
    return this.words;
  }

  derive(scheme: AddressScheme, account: number, index: number): DerivedAddress {
    const publicKey = childPublicKey(this.branch(scheme, account), index, scheme.compressedKey);
    return { address: scheme.address(publicKey), path: addressPath(scheme, account, index) };
  }

  /** The public half of an account's receive branch (to derive addresses ahead, off the event loop). */
  branchPublicKey(scheme: AddressScheme, account: number): PublicBranchKey {
    const { publicKey, chainCode } = this.branch(scheme, account);
    // Own copies: a Buffer may be a view of a larger pooled one, which a postMessage would copy whole.
    return { publicKey: Uint8Array.from(publicKey), chainCode: Uint8Array.from(chainCode) };
  }

  private branch(scheme: AddressScheme, account: number): BranchKey {
    const branchPath = receiveBranchPath(scheme, account);
    let branch = this.branches.get(branchPath);
    if (!branch) {
      const node = this.root.derivePath(branchPath);
      branch = { privateKey: node.privateKey!, publicKey: node.publicKey, chainCode: node.chainCode };
      if (this.branches.size > 10000) this.branches.clear();
      this.branches.set(branchPath, branch);
    }
    return branch;
  }

  /** The private node at a path (signing sweeps and withdrawals; never logged). */
  nodeAt(path: string): BIP32Interface {
    return this.root.derivePath(path);
  }
}
