import { pbkdf2Sync } from 'node:crypto';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import { payments, Psbt } from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { btcNetwork } from '../chains/btc/derive';
import { eip1559Signed, eip1559SigningHash } from '../chains/evm/eip1559';
import { legacySigned, legacySigningHash } from '../chains/evm/legacy-tx';
import { receiveBranchPath, type AddressScheme, type KeyChain } from '../chains/derivation';
import type { SentTransaction } from '../chains/types';
import type { BtcSpend, EvmSpend, SignedBtc } from './spend';
import type { Logger } from '../shared/logger';
import type { PublicBranchKey } from './child-key';

const bip32 = BIP32Factory(ecc);

export type { BtcCoin, BtcSpend, EvmSpend, SignedBtc } from './spend';

/**
 * The one place that derives a private key (ARCHITECTURE "The money path, both ways"). It holds no
 * key and no seed: each use opens the words (sealed at rest, `openWords`), derives what it needs,
 * and wipes the private keys before it returns. Everything else gets public keys: the branch keys
 * addresses are derived from (HdWallet), and the signed bytes of a transaction.
 */
export class WalletSigner {
  /** The BIP32 master key fingerprint (8 hex digits): names the seed without revealing it. */
  readonly fingerprint: string;

  constructor(
    private readonly openWords: () => string,
    private readonly logger: Logger,
  ) {
    this.fingerprint = this.withRoot((root) => Buffer.from(root.fingerprint).toString('hex'));
  }

  /** The public half of an account's receive (…/0) or change (…/1) branch, whose hardened levels need the seed. */
  branchKey(scheme: AddressScheme, account: number, keyChain: KeyChain = 0): PublicBranchKey {
    return this.branchKeyAt(receiveBranchPath(scheme, account, keyChain));
  }

  /** The public half of the branch at `path` (m/purpose'/coin'/account'/keyChain). */
  branchKeyAt(path: string): PublicBranchKey {
    return this.withNode(path, (node) => ({
      publicKey: Uint8Array.from(node.publicKey),
      chainCode: Uint8Array.from(node.chainCode),
    }));
  }

  /** The public halves of several branches from one opening of the seed (shared prefixes derived once). */
  branchKeysAt(paths: readonly string[]): PublicBranchKey[] {
    if (paths.length === 0) return [];
    return this.withRoot((root) => {
      const derived = new Map<string, BIP32Interface>([['m', root]]);
      try {
        return paths.map((p) => {
          const node = deriveCached(derived, p);
          return { publicKey: Uint8Array.from(node.publicKey), chainCode: Uint8Array.from(node.chainCode) };
        });
      } finally {
        for (const [path, node] of derived) if (path !== 'm') wipe(node);
      }
    });
  }

  /** For `coinkeep signer backup` only (the signer process). */
  backupWords(): string {
    return this.openWords();
  }

  /**
   * A transaction spending P2WPKH coins of the wallet, every input signed (SIGHASH_ALL) by the key
   * of its own path (receive or change chain of any account): each key is derived here, from a
   * root opened for this call, and wiped before it returns.
   */
  signBitcoin(spend: BtcSpend): SignedBtc {
    const network = btcNetwork(spend.chain);
    // bitcoinjs refuses above 5,000 sat/vB by default; the payout engine holds every payout under Bitcoin Core's own maxfeerate (10,000 sat/vB).
    const psbt = new Psbt({ network, maximumFeeRate: 10_000 });
    const paths = spend.coins.map((c) => c.path);
    this.withRoot((root) => {
      const derived = new Map<string, BIP32Interface>([['m', root]]);
      try {
        const nodes = paths.map((p) => deriveCached(derived, p));
        spend.coins.forEach((c, i) => {
          const script = payments.p2wpkh({ pubkey: nodes[i]!.publicKey, network }).output!;
          psbt.addInput({ hash: c.txid, index: c.vout, sequence: spend.sequence, witnessUtxo: { script, value: c.value } });
        });
        for (const o of spend.outputs) psbt.addOutput(o.script ? { script: o.script, value: o.value } : { address: o.address, value: o.value });
        nodes.forEach((node, i) => psbt.signInput(i, { publicKey: node.publicKey, sign: (hash) => ecc.sign(hash, node.privateKey!) }));
      } finally {
        for (const [path, node] of derived) if (path !== 'm') wipe(node);
      }
    });
    psbt.finalizeAllInputs();
    const tx = psbt.extractTransaction();
    const signed = { txid: tx.getId(), raw: tx.toHex(), vsize: tx.virtualSize() };
    this.logger.info('bitcoin transaction signed', { chain: spend.chain.id, txid: signed.txid, inputs: paths.length });
    return signed;
  }

  /** An EIP-1559 (type 2) transaction, or a legacy one (`spend.legacy`), signed by the key at `spend.path`. */
  signEvm(spend: EvmSpend): SentTransaction {
    // tiny-secp256k1 rather than ethers' SigningKey, which keeps the key as a hex string nobody can wipe.
    const signed = this.withNode(spend.path, (node) => signEvmSpend(spend, node));
    this.logger.info('evm transaction signed', { chain_id: spend.chainId, txid: signed.txid, nonce: spend.nonce });
    return signed;
  }

  /**
   * Several EIP-1559 transactions (a pass's sweeps) from one opening of the seed: the keys of
   * their paths derived through shared prefixes, each wiped before this returns.
   */
  signEvmAll(spends: readonly EvmSpend[]): SentTransaction[] {
    if (spends.length === 0) return [];
    const signed = this.withRoot((root) => {
      const derived = new Map<string, BIP32Interface>([['m', root]]);
      try {
        return spends.map((spend) => signEvmSpend(spend, deriveCached(derived, spend.path)));
      } finally {
        for (const [path, node] of derived) if (path !== 'm') wipe(node);
      }
    });
    this.logger.info('evm transactions signed', { chain_id: spends[0]!.chainId, count: spends.length });
    return signed;
  }

  /**
   * A Tron signature of a transaction id (the sha256 of its raw_data, hex) by the key at `path`:
   * 65 bytes r ‖ s ‖ v (v 27 or 28), hex.
   */
  signTron(path: string, txid: string): string {
    const hash = Buffer.from(txid, 'hex');
    if (hash.length !== 32) throw new Error('a Tron transaction id is 32 bytes');
    return this.withNode(path, (node) => {
      const { signature, recoveryId } = ecc.signRecoverable(hash, node.privateKey!);
      return Buffer.from(signature).toString('hex') + (recoveryId + 27).toString(16);
    });
  }

  private withNode<T>(path: string, use: (node: BIP32Interface) => T): T {
    return this.withRoot((root) => {
      const node = root.derivePath(path);
      try {
        return use(node);
      } finally {
        wipe(node);
      }
    });
  }

  private withRoot<T>(use: (root: BIP32Interface) => T): T {
    // BIP39's seed (no passphrase) with Node's native PBKDF2: bip39's own, in JavaScript, takes
    // tens of milliseconds of the event loop at each use.
    const seed = pbkdf2Sync(this.openWords().normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512');
    const root = bip32.fromSeed(seed);
    try {
      return use(root);
    } finally {
      seed.fill(0);
      wipe(root);
    }
  }
}

/** `spend` signed by `node`'s key: type 2, or type 0 with EIP-155 on a chain without EIP-1559. */
function signEvmSpend(spend: EvmSpend, node: BIP32Interface): SentTransaction {
  const { path: _path, legacy, ...fields } = spend;
  if (legacy) {
    const tx = {
      chainId: fields.chainId,
      nonce: fields.nonce,
      gasPrice: fields.maxFeePerGas,
      gasLimit: fields.gasLimit,
      to: fields.to,
      value: fields.value,
      data: fields.data,
    };
    const { signature, recoveryId } = ecc.signRecoverable(legacySigningHash(tx), node.privateKey!);
    return legacySigned(tx, { r: signature.subarray(0, 32), s: signature.subarray(32), yParity: recoveryId as 0 | 1 });
  }
  const { signature, recoveryId } = ecc.signRecoverable(eip1559SigningHash(fields), node.privateKey!);
  return eip1559Signed(fields, { r: signature.subarray(0, 32), s: signature.subarray(32), yParity: recoveryId as 0 | 1 });
}

/**
 * The node at `path`, through the nodes of its prefixes kept in `derived` (keyed by path, the root
 * at 'm'): many coins of one account share every level but the last, derived once.
 */
function deriveCached(derived: Map<string, BIP32Interface>, path: string): BIP32Interface {
  const found = derived.get(path);
  if (found) return found;
  const cut = path.lastIndexOf('/');
  if (cut < 0) throw new Error(`not a derivation path: ${path}`);
  const parent = deriveCached(derived, path.slice(0, cut));
  const level = path.slice(cut + 1);
  const hardened = level.endsWith("'");
  const index = Number(hardened ? level.slice(0, -1) : level);
  if (!Number.isInteger(index) || index < 0) throw new Error(`not a derivation path: ${path}`);
  const node = hardened ? parent.deriveHardened(index) : parent.derive(index);
  derived.set(path, node);
  return node;
}

/** Overwrites a node's private key in place (bip32 hands out its own buffer). */
function wipe(node: BIP32Interface): void {
  node.privateKey?.fill(0);
}
