import type { EntityManager } from 'typeorm';
import { addressPath, receiveBranchPath, type AddressScheme, type KeyChain } from '../chains/derivation';
import { publicChildKeys, type PublicBranchKey } from './child-key';

export interface DerivedAddress {
  address: string;
  path: string;
}

/** Where the public keys of the wallet's branches come from: the signer, which alone holds the seed. */
export interface BranchKeySource {
  readonly fingerprint: string;
  branchKey(scheme: AddressScheme, account: number, keyChain?: KeyChain): PublicBranchKey;
  /** Makes the keys of these branch paths known before `branchKey` is asked (the daemon's cache of the signer's keys); absent: always known. */
  ensure?(paths: readonly string[], em?: EntityManager): Promise<void>;
}

interface PublicBranch {
  key: PublicBranchKey;
  childKey: (index: number, compressed: boolean) => Uint8Array;
}

/**
 * The wallet's addresses, from the public keys of its receive and change branches only (BIP32 CKDpub): the
 * branch key is asked of the signer once and cached, and an address costs one child derivation.
 * Nothing here can reach a private key.
 */
export class HdWallet {
  private readonly branches = new Map<string, PublicBranch>();

  constructor(private readonly keys: BranchKeySource) {}

  /** The BIP32 master key fingerprint (8 hex digits): names the seed without revealing it. */
  get fingerprint(): string {
    return this.keys.fingerprint;
  }

  /** Makes sure the branch's public key is at hand (asked of the signer once, then kept), in the caller's transaction when given. */
  async prepare(scheme: AddressScheme, account: number, keyChain: KeyChain = 0, em?: EntityManager): Promise<void> {
    const path = receiveBranchPath(scheme, account, keyChain);
    if (!this.branches.has(path) && this.keys.ensure) await this.keys.ensure([path], em);
  }

  /** An address of the account's receive chain, or (keyChain 1) of its change chain. */
  derive(scheme: AddressScheme, account: number, index: number, keyChain: KeyChain = 0): DerivedAddress {
    const publicKey = this.branch(scheme, account, keyChain).childKey(index, scheme.compressedKey);
    return { address: scheme.address(publicKey), path: addressPath(scheme, account, index, keyChain) };
  }

  /** The public half of an account's receive branch (to derive addresses ahead, off the event loop). */
  branchPublicKey(scheme: AddressScheme, account: number): PublicBranchKey {
    return this.branch(scheme, account).key;
  }

  private branch(scheme: AddressScheme, account: number, keyChain: KeyChain = 0): PublicBranch {
    const branchPath = receiveBranchPath(scheme, account, keyChain);
    let branch = this.branches.get(branchPath);
    if (!branch) {
      const key = this.keys.branchKey(scheme, account, keyChain);
      branch = { key, childKey: publicChildKeys(key) };
      if (this.branches.size > 10000) this.branches.clear();
      this.branches.set(branchPath, branch);
    }
    return branch;
  }
}
