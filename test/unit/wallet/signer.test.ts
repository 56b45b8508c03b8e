/**
 * The wallet's signer: the one place a private key is derived, at signing only. What it signs
 * verifies with bitcoinjs-lib and ethers against the addresses the public-key wallet derives, and
 * neither its log nor the signer object shows key or seed material.
 */
import test from 'ava';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { payments, script as bscript, Transaction } from 'bitcoinjs-lib';
import { Interface, parseUnits, Transaction as EvmTransaction } from 'ethers';
import * as ecc from 'tiny-secp256k1';
import { inspect } from 'node:util';
import { btcNetwork, btcScheme } from '../../../src/chains/btc/derive';
import { erc20TransferData } from '../../../src/chains/evm/erc20';
import { evmScheme } from '../../../src/chains/evm/derive';
import { createLogger } from '../../../src/shared/logger';
import { HdWallet } from '../../../src/wallet/hd';
import { WalletSigner } from '../../../src/wallet/signer';
import { TEST_MNEMONIC } from '../../helpers/daemon';

const CHAIN = { id: 'bitcoin', network: 'regtest', options: { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a } };
const NETWORK = btcNetwork(CHAIN);
const USDT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const MERCHANT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

function signerWithLog(): { signer: WalletSigner; wallet: HdWallet; lines: string[] } {
  const lines: string[] = [];
  const signer = new WalletSigner(() => TEST_MNEMONIC, createLogger({ level: 'debug', write: (l) => lines.push(l) }));
  return { signer, wallet: new HdWallet(signer), lines };
}

/** Every form a secret of the test seed could take in text: the words, the seed, the private keys signed with. */
function secrets(paths: string[]): string[] {
  const seed = mnemonicToSeedSync(TEST_MNEMONIC);
  const root = BIP32Factory(ecc).fromSeed(seed);
  const keys = paths.map((p) => Buffer.from(root.derivePath(p).privateKey!));
  return [
    ...TEST_MNEMONIC.split(' ').filter((w) => w !== 'abandon' && w !== 'about'),
    TEST_MNEMONIC,
    'abandon abandon',
    seed.toString('hex'),
    seed.toString('base64'),
    root.toBase58(),
    ...keys.flatMap((k) => [k.toString('hex'), k.toString('base64'), [...k].join(',')]),
  ];
}

test('a P2WPKH spend signed by the signer verifies with bitcoinjs-lib: each input signed by the key of the address the wallet derived', (t) => {
  const { signer, wallet } = signerWithLog();
  const scheme = btcScheme(CHAIN);
  const owners = [wallet.derive(scheme, 3, 0), wallet.derive(scheme, 3, 7)];
  const coins = owners.map((o, i) => ({ txid: `${i + 1}`.repeat(64), vout: i, value: 50_000n + BigInt(i), path: o.path }));
  const signed = signer.signBitcoin({ chain: CHAIN, coins, outputs: [{ address: owners[0]!.address, value: 90_000n }] });

  const tx = Transaction.fromHex(signed.raw);
  t.is(tx.getId(), signed.txid);
  t.is(tx.ins.length, 2);
  tx.ins.forEach((input, i) => {
    const [sig, pubkey] = input.witness;
    t.is(payments.p2wpkh({ pubkey: pubkey!, network: NETWORK }).address, owners[i]!.address);
    const { signature, hashType } = bscript.signature.decode(sig!);
    t.is(hashType, Transaction.SIGHASH_ALL);
    const scriptCode = payments.p2pkh({ pubkey: pubkey! }).output!;
    t.true(ecc.verify(tx.hashForWitnessV0(i, scriptCode, coins[i]!.value, hashType), pubkey!, signature));
    t.is(Buffer.from(input.hash).reverse().toString('hex'), coins[i]!.txid);
  });
});

test("a payout spending receive and change coins of one account is signed input by input with each path's key, replaceable, and its vsize reported", (t) => {
  const { signer, wallet, lines } = signerWithLog();
  const scheme = btcScheme(CHAIN);
  const owners = [wallet.derive(scheme, 4, 2), wallet.derive(scheme, 4, 0, 1), wallet.derive(scheme, 4, 9), wallet.derive(scheme, 4, 3, 1)];
  t.regex(owners[1]!.path, /^m\/84'\/1'\/4'\/1\/0$/);
  const coins = owners.map((o, i) => ({ txid: `${i + 5}`.repeat(64), vout: i, value: 40_000n, path: o.path }));
  const signed = signer.signBitcoin({ chain: CHAIN, coins, outputs: [{ address: owners[0]!.address, value: 150_000n }], sequence: 0xfffffffd });

  const tx = Transaction.fromHex(signed.raw);
  t.is(signed.vsize, tx.virtualSize());
  tx.ins.forEach((input, i) => {
    t.is(input.sequence, 0xfffffffd);
    const [sig, pubkey] = input.witness;
    t.is(payments.p2wpkh({ pubkey: pubkey!, network: NETWORK }).address, owners[i]!.address);
    const { signature, hashType } = bscript.signature.decode(sig!);
    t.true(ecc.verify(tx.hashForWitnessV0(i, payments.p2pkh({ pubkey: pubkey! }).output!, coins[i]!.value, hashType), pubkey!, signature));
  });
  const text = lines.join('\n');
  for (const secret of secrets(owners.map((o) => o.path))) t.false(text.includes(secret));
});

test('EIP-1559 transactions signed by the signer, a value transfer and an ERC-20 transfer call, recover with ethers to the address the wallet derived', (t) => {
  const { signer, wallet } = signerWithLog();
  const from = wallet.derive(evmScheme(), 2, 5);
  const fees = { gasLimit: 60_000n, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
  const native = EvmTransaction.from(signer.signEvm({ chainId: 31337, path: from.path, nonce: 4, to: MERCHANT, value: parseUnits('0.25', 18), ...fees }).raw);
  t.is(native.type, 2);
  t.is(native.from, from.address);
  t.like(native, { chainId: 31337n, nonce: 4, to: MERCHANT, value: parseUnits('0.25', 18), data: '0x', ...fees });

  const signed = signer.signEvm({ chainId: 1, path: from.path, nonce: 5, to: USDT, value: 0n, data: erc20TransferData(MERCHANT, 12_500_000n), ...fees });
  const token = EvmTransaction.from(signed.raw);
  t.is(token.hash, signed.txid);
  t.is(token.from, from.address);
  t.is(token.to, USDT);
  const call = new Interface(['function transfer(address to, uint256 amount) returns (bool)']).parseTransaction({ data: token.data })!;
  t.is(call.name, 'transfer');
  t.deepEqual([...call.args], [MERCHANT, 12_500_000n]);
});

test('signing logs what was signed and no key or seed material; the signer holds none either', (t) => {
  const { signer, wallet, lines } = signerWithLog();
  const btcOwner = wallet.derive(btcScheme(CHAIN), 0, 1);
  const evmOwner = wallet.derive(evmScheme(), 0, 2);
  const btc = signer.signBitcoin({
    chain: CHAIN,
    coins: [{ txid: 'ab'.repeat(32), vout: 0, value: 10_000n, path: btcOwner.path }],
    outputs: [{ address: btcOwner.address, value: 9_000n }],
  });
  const evm = signer.signEvm({
    chainId: 1,
    path: evmOwner.path,
    nonce: 0,
    to: MERCHANT,
    value: 1n,
    gasLimit: 21_000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
  });
  const log = lines.join('\n');
  t.true(log.includes(btc.txid) && log.includes(evm.txid), 'each signature is logged by its txid');
  const held = inspect(signer, { depth: 10, showHidden: true, getters: true });
  for (const secret of secrets([btcOwner.path, evmOwner.path])) {
    t.false(log.includes(secret), `the log shows no ${secret.slice(0, 6)}...`);
    t.false(held.includes(secret), `the signer holds no ${secret.slice(0, 6)}...`);
  }
});
