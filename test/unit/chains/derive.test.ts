import test from 'ava';
import { address as btcAddressCodec } from 'bitcoinjs-lib';
import { computeAddress, hexlify } from 'ethers';
import * as ecc from 'tiny-secp256k1';
import { TronWeb } from 'tronweb';
import { btcCoinType, btcNetwork, btcScheme } from '../../../src/chains/btc/derive';
import { addressPath, schemeFor } from '../../../src/chains/derivation';
import { evmAddress, evmScheme } from '../../../src/chains/evm/derive';
import { tronFromHex, tronScheme, tronToHex } from '../../../src/chains/tron/derive';
import type { ChainConfig } from '../../../src/config/schema';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { silentLogger } from '../../../src/shared/logger';
import { HdWallet } from '../../../src/wallet/hd';
import { normaliseMnemonic } from '../../../src/wallet/seed';
import { WalletSigner } from '../../../src/wallet/signer';

/** The mnemonic of BIP84's and the usual BIP44 test vectors. */
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** Addresses from public keys only, as the daemon derives them; `root` is bip32's own derivation, to compare. */
const wallet = new HdWallet(new WalletSigner(() => ABANDON, silentLogger));
const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(ABANDON));
const uncompressed = (pub: Uint8Array): Uint8Array => ecc.pointCompress(pub, false);

const btc = (network: string, options: Record<string, unknown> = {}) => btcScheme({ network, options });

test("BIP84 vectors: m/84'/0'/0'/0/0 and /0/1 on mainnet", (t) => {
  const s = btc('mainnet');
  t.deepEqual(wallet.derive(s, 0, 0), { address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', path: "m/84'/0'/0'/0/0" });
  t.is(wallet.derive(s, 0, 1).address, 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
});

test('test networks use coin type 1; testnet and signet are tb, Core regtest bcrt', (t) => {
  for (const n of ['testnet', 'signet', 'regtest']) t.is(btcCoinType({ network: n }), 1);
  t.is(btcCoinType({ network: 'mainnet' }), 0);
  const tb = wallet.derive(btc('testnet'), 0, 0);
  t.is(tb.path, "m/84'/1'/0'/0/0");
  t.is(tb.address, 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl');
  t.is(wallet.derive(btc('signet'), 0, 0).address, tb.address);
  const rt = wallet.derive(btc('regtest'), 0, 0).address;
  t.true(rt.startsWith('bcrt1q'));
  // Same witness program, other human-readable part.
  t.deepEqual(btcAddressCodec.fromBech32(rt).data, btcAddressCodec.fromBech32(tb.address).data);
});

test('bcoin regtest: explicit overrides give rb1q addresses', (t) => {
  const opts = { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a };
  const net = btcNetwork({ network: 'regtest', options: opts });
  t.like(net, { bech32: 'rb', pubKeyHash: 0x3c, scriptHash: 0x26, wif: 0x5a });
  const rb = wallet.derive(btc('regtest', opts), 0, 0).address;
  t.true(rb.startsWith('rb1q'));
  const tb = wallet.derive(btc('testnet'), 0, 0).address;
  t.deepEqual(btcAddressCodec.fromBech32(rb).data, btcAddressCodec.fromBech32(tb).data);
});

test('BIP44 ETH vectors, EIP-55 checksummed', (t) => {
  const s = evmScheme();
  t.deepEqual(wallet.derive(s, 0, 0), { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', path: "m/44'/60'/0'/0/0" });
  t.is(wallet.derive(s, 0, 1).address, '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0');
  // Equal to ethers' own computation, from compressed and uncompressed keys.
  for (const i of [2, 3, 99]) {
    const pub = root.derivePath(`m/44'/60'/4'/0/${i}`).publicKey;
    t.is(evmAddress(pub), computeAddress(hexlify(pub)));
    t.is(wallet.derive(s, 4, i).address, computeAddress(hexlify(pub)));
  }
  const pub = root.derivePath("m/44'/60'/0'/0/0").publicKey;
  t.is(evmAddress(uncompressed(pub)), '0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
});

test('Tron BIP44 coin 195 agrees with tronweb', (t) => {
  const s = tronScheme();
  t.is(wallet.derive(s, 0, 0).address, 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
  for (const [account, index] of [
    [0, 0],
    [0, 1],
    [3, 7],
    [12, 1000],
  ] as const) {
    const ours = wallet.derive(s, account, index);
    t.is(ours.path, `m/44'/195'/${account}'/0/${index}`);
    t.is(ours.address, TronWeb.fromMnemonic(ABANDON, ours.path).address);
  }
});

test('Tron hex and base58 forms convert both ways; a bad checksum is refused', (t) => {
  const a = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
  const hex = tronToHex(a);
  t.regex(hex, /^0x[0-9a-f]{40}$/);
  t.is(tronFromHex(hex), a);
  t.throws(() => tronToHex('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdJ'));
});

test('accounts are separate branches: same index, different addresses', (t) => {
  for (const s of [btc('mainnet'), evmScheme(), tronScheme()]) {
    const a = wallet.derive(s, 0, 5).address;
    const b = wallet.derive(s, 1, 5).address;
    t.not(a, b);
    t.is(wallet.derive(s, 1, 5).address, b, 'derivation is deterministic (cache too)');
  }
});

test('schemeFor picks the family; paths refuse out-of-range numbers', (t) => {
  const chain = (kind: ChainConfig['kind'], network?: string) => ({ kind, network, options: {} }) as unknown as ChainConfig;
  t.like(schemeFor(chain('btc', 'mainnet')), { purpose: 84, coinType: 0 });
  t.like(schemeFor(chain('evm')), { purpose: 44, coinType: 60 });
  t.like(schemeFor(chain('tron')), { purpose: 44, coinType: 195 });
  t.throws(() => addressPath(evmScheme(), -1, 0));
  t.throws(() => addressPath(evmScheme(), 0, 2 ** 31));
});

test('mnemonics: normalised as typed, checksum checked', (t) => {
  t.is(normaliseMnemonic(`  ${ABANDON.toUpperCase().replace(/ /g, '   ')}\n`), ABANDON);
  t.is(normaliseMnemonic(ABANDON.replace(/about$/, 'abandon')), null);
  t.is(normaliseMnemonic('abandon about'), null);
  t.regex(wallet.fingerprint, /^[0-9a-f]{8}$/);
  t.is(wallet.fingerprint, '73c5da0a');
});
