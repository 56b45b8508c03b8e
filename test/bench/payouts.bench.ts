import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { address as baddress, payments, Psbt } from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { coinId } from '../../src/catalog/coins';
import { btcNetwork, btcScheme } from '../../src/chains/btc/derive';
import { parseConfig } from '../../src/config/schema';
import type { AddressRow } from '../../src/db/entities/chain';
import { insertRow } from '../../src/db/raw';
import { Store } from '../../src/db/store';
import { bcoinChainEntry } from '../../src/dev/bcoin';
import { BtcPayoutEngine, RBF_SEQUENCE, type BtcPayout } from '../../src/payouts/btc/btc-payout-engine';
import { releaseCoins } from '../../src/payouts/btc/coin-store';
import { systemClock } from '../../src/shared/clock';
import { silentLogger } from '../../src/shared/logger';
import { Amount } from '../../src/shared/money';
import { HdWallet } from '../../src/wallet/hd';
import { WalletSigner } from '../../src/wallet/signer';
import { fmt, report } from './lib';
import { TEST_MNEMONIC } from '../helpers/test-mnemonic';

const COINS = Number(process.env.BENCH_PAYOUT_COINS ?? 10_000);
const WITHDRAWALS = Number(process.env.BENCH_PAYOUT_WITHDRAWALS ?? 100);
const RUNS = 5;
const ACCOUNT = 'bench-account';
const BRANCH = 0;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * A Bitcoin payout of 100 withdrawals from an account holding 10,000 unspent outputs: the engine's
 * time to read the account's coins, select, issue the change address, reserve, sign and return the
 * storable result, against bitcoinjs-lib alone signing the same transaction (keys already derived).
 */
export async function run(): Promise<void> {
  const chain = parseConfig({ chains: [bcoinChainEntry('http://x:y@127.0.0.1:1/', { confirmations: 2 })] }).chains[0]!;
  const network = btcNetwork(chain);
  const scheme = btcScheme(chain);
  const signer = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
  const wallet = new HdWallet(signer);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-bench-payouts-'));
  const store = await Store.open({ url: `sqlite:${path.join(dir, 'bench.db')}` });
  try {
    await store.migrate();
    const now = new Date().toISOString();
    await store.write(async (em) => {
      for (let i = 0; i < COINS; i++) {
        const owner = wallet.derive(scheme, BRANCH, i);
        const addressId = `addr-${String(i).padStart(6, '0')}`;
        await insertRow(em, 'addresses', {
          id: addressId, account_id: ACCOUNT, chain_id: chain.id, coin_id: coinId(chain.id, 'native'), address: owner.address,
          derivation_path: owner.path, derivation_index: i, purpose: 'invoice', invoice_id: null, status: 'active', created_at: now, updated_at: now,
        });
        const sat = 20_000n + BigInt((i * 7919) % 100_000);
        await insertRow(em, 'chain_transfers', {
          id: `ct-${String(i).padStart(6, '0')}`, chain_id: chain.id, coin_id: coinId(chain.id, 'native'), txid: randomBytes(32).toString('hex'), output_index: i % 4,
          direction: 'incoming', purpose: 'invoice', address: owner.address, address_id: addressId, account_id: ACCOUNT, amount: Amount.fromBaseUnits(sat, 8).toString(),
          spent_transfer_id: null, nonce: null, block_height: 100, block_hash: '00'.repeat(32), confirmations: 6, status: 'confirmed', seen_at: now, confirmed_at: now,
          reverted_at: null, created_at: now, updated_at: now,
        });
      }
    });
    let changeIndex = 0;
    const change = wallet.derive(scheme, BRANCH, 0, 1);
    const engine = new BtcPayoutEngine({
      chain,
      signer,
      // Issuing the change address is the wallet's (measured with the daemon's invoices); here a fixed one.
      addresses: { allocate: async () => ({ address: change.address, derivation_path: change.path, derivation_index: changeIndex++ }) as AddressRow },
      clock: systemClock,
    });
    const orders = Array.from({ length: WITHDRAWALS }, (_, i) => ({ withdrawalId: `w${i}`, address: baddress.toBech32(randomBytes(20), 0, network.bech32), amount: 100_000n }));

    const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(TEST_MNEMONIC));
    const bare = (p: BtcPayout): string => {
      const keys = p.inputs.map((c) => root.derivePath(c.path));
      const t0 = process.hrtime.bigint();
      const psbt = new Psbt({ network });
      p.inputs.forEach((c, i) =>
        psbt.addInput({ hash: c.txid, index: c.vout, sequence: RBF_SEQUENCE, witnessUtxo: { script: payments.p2wpkh({ pubkey: keys[i]!.publicKey, network }).output!, value: c.value } }),
      );
      for (const o of p.outputs) psbt.addOutput({ address: o.address, value: o.value });
      keys.forEach((k, i) => psbt.signInput(i, k));
      psbt.finalizeAllInputs();
      const raw = psbt.extractTransaction().toHex();
      bareMs.push(ms(t0));
      return raw;
    };

    const engineMs: number[] = [];
    const bareMs: number[] = [];
    let last: BtcPayout | null = null;
    for (let run = 0; run < RUNS + 1; run++) {
      const t0 = process.hrtime.bigint();
      const payout = await store.write((em) => engine.build(em, { accountId: ACCOUNT, orders, satPerVbyte: 5 }));
      const took = ms(t0);
      const raw = bare(payout);
      if (raw !== payout.raw) throw new Error('the engine and bitcoinjs-lib signed different transactions');
      if (run > 0) engineMs.push(took);
      else bareMs.pop();
      await store.write((em) => releaseCoins(em, payout.payoutId));
      last = payout;
    }
    const ratio = median(engineMs) / median(bareMs);
    report(
      `Bitcoin payout: ${WITHDRAWALS} withdrawals from an account of ${COINS} coins (median of ${RUNS})`,
      [
        ['inputs, outputs, vsize, fee', `${last!.inputs.length}, ${last!.outputs.length}, ${last!.vsize} vB, ${last!.fee} sat`],
        ['engine: read coins, select, reserve, sign (ms)', fmt(median(engineMs))],
        ['bitcoinjs-lib alone signing it (ms)', fmt(median(bareMs))],
      ],
      { name: 'engine / bitcoinjs-lib', value: ratio, goal: '<= 1.5', ok: ratio <= 1.5 },
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
