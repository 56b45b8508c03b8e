import { localSigner } from '../helpers/local-signer';
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
import type { AccountRow } from '../../src/db/entities/team';
import type { AddressRow } from '../../src/db/entities/chain';
import { insertRow } from '../../src/db/raw';
import { Store } from '../../src/db/store';
import { bcoinChainEntry } from '../../src/dev/bcoin';
import { BtcPayoutEngine, RBF_SEQUENCE, type BtcPayout } from '../../src/chains/btc/payouts/btc-payout-engine';
import { releaseCoins } from '../../src/chains/btc/payouts/coin-store';
import { BtcRail } from '../../src/chains/btc/payouts/btc-rail';
import { PayoutStore } from '../../src/payouts/payout-store';
import { PayoutWorker } from '../../src/payouts/payout-worker';
import { feeCeilings } from '../../src/payouts/fee-ceiling';
import { Catalog } from '../../src/catalog/coins';
import { Outbox } from '../../src/events/outbox';
import { Sealer } from '../../src/db/seal';
import { cells } from '../../src/db/sealed-values';
import { placeholder, rawQuery, rawRun } from '../../src/db/raw';
import type { WithdrawalRow } from '../../src/db/entities/withdrawals';
import type { MoneyMovement } from '../../src/money/money-movement';
import { WithdrawalService, type WithdrawalServiceDeps } from '../../src/withdrawals/withdrawal.service';
import { systemClock } from '../../src/shared/clock';
import { silentLogger } from '../../src/shared/logger';
import { Amount } from '../../src/shared/amount';
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
      // A verified account, not frozen: the worker re-checks both when it claims (PRODUCT §14).
      await insertRow(em, 'accounts', {
        id: ACCOUNT,
        name: 'bench',
        status: 'active',
        verified: true,
        platform_fee_percent: '0',
        default_fiat: null,
        invoice_ttl_minutes: 30,
        underpayment_tolerance_percent: '0',
        dual_approval_threshold: null,
        daily_withdrawal_limit: null,
        withdrawal_whitelist_enforced: false,
        created_at: now,
        updated_at: now,
      } satisfies AccountRow);
      for (let i = 0; i < COINS; i++) {
        const owner = wallet.derive(scheme, BRANCH, i);
        const addressId = `addr-${String(i).padStart(6, '0')}`;
        await insertRow(em, 'addresses', {
          id: addressId,
          account_id: ACCOUNT,
          chain_id: chain.id,
          coin_id: coinId(chain.id, 'native'),
          address: owner.address,
          derivation_path: owner.path,
          derivation_index: i,
          purpose: 'invoice',
          invoice_id: null,
          status: 'active',
          created_at: now,
          updated_at: now,
        });
        const sat = 20_000n + BigInt((i * 7919) % 100_000);
        await insertRow(em, 'chain_transfers', {
          id: `ct-${String(i).padStart(6, '0')}`,
          chain_id: chain.id,
          coin_id: coinId(chain.id, 'native'),
          txid: randomBytes(32).toString('hex'),
          output_index: i % 4,
          direction: 'incoming',
          purpose: 'invoice',
          address: owner.address,
          address_id: addressId,
          account_id: ACCOUNT,
          amount: Amount.fromBaseUnits(sat, 8).toString(),
          spent_transfer_id: null,
          nonce: null,
          block_height: 100,
          block_hash: '00'.repeat(32),
          confirmations: 6,
          status: 'confirmed',
          seen_at: now,
          confirmed_at: now,
          reverted_at: null,
          created_at: now,
          updated_at: now,
        });
      }
    });
    let changeIndex = 0;
    const change = wallet.derive(scheme, BRANCH, 0, 1);
    const engine = new BtcPayoutEngine({
      chain,
      signer: localSigner(signer),
      // Issuing the change address is the wallet's (measured with the daemon's invoices); here a fixed one.
      addresses: { allocate: async () => ({ address: change.address, derivation_path: change.path, derivation_index: changeIndex++ }) as AddressRow },
      clock: systemClock,
    });
    const orders = Array.from({ length: WITHDRAWALS }, (_, i) => ({
      withdrawalId: `w${i}`,
      address: baddress.toBech32(randomBytes(20), 0, network.bech32),
      amount: 100_000n,
    }));

    const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(TEST_MNEMONIC));
    const bare = (p: BtcPayout): string => {
      const keys = p.inputs.map((c) => root.derivePath(c.path));
      const t0 = process.hrtime.bigint();
      const psbt = new Psbt({ network });
      p.inputs.forEach((c, i) =>
        psbt.addInput({
          hash: c.txid,
          index: c.vout,
          sequence: RBF_SEQUENCE,
          witnessUtxo: { script: payments.p2wpkh({ pubkey: keys[i]!.publicKey, network }).output!, value: c.value },
        }),
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
    const worker = await workerPath({ store, chain, signer, change, orders, bare, bareMs, fresh: () => baddress.toBech32(randomBytes(20), 0, network.bech32) });
    report(
      `Bitcoin payout: ${WITHDRAWALS} withdrawals from an account of ${COINS} coins (median of ${RUNS})`,
      [
        ['inputs, outputs, vsize, fee', `${last!.inputs.length}, ${last!.outputs.length}, ${last!.vsize} vB, ${last!.fee} sat`],
        ['engine: read coins, select, reserve, sign (ms)', fmt(median(engineMs))],
        ['bitcoinjs-lib alone signing it (ms)', fmt(median(bareMs))],
      ],
      { name: 'engine / bitcoinjs-lib', value: ratio, goal: '<= 1.5', ok: ratio <= 1.5 },
    );
    report(
      `Payout worker: a batch of ${WITHDRAWALS} pending withdrawals from an account of ${COINS} coins (median of ${RUNS})`,
      [
        ['worker: claim, select, build, sign, store (ms)', fmt(worker.workerMs)],
        ['bitcoinjs-lib alone signing it (ms)', fmt(worker.bareMs)],
      ],
      { name: 'worker / bitcoinjs-lib', value: worker.workerMs / worker.bareMs, goal: '<= 1.5', ok: worker.workerMs / worker.bareMs <= 1.5 },
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Stops the worker's run right after it stored the payout: what is measured is claim, select, build, sign and store. */
class Stored extends Error {}

/**
 * The payout worker's path for the same batch: a run of the worker (its role, the open payouts,
 * the due pending withdrawals read, the fee quote from a node stand-in) that claims the 100
 * withdrawals (guarded moves and their events), selects, builds and signs through the Bitcoin rail,
 * and stores the payout (sealed bytes, legs) in one transaction; measured to that commit.
 */
async function workerPath(ctx: {
  store: Store;
  chain: ReturnType<typeof parseConfig>['chains'][number];
  signer: WalletSigner;
  change: { address: string; path: string };
  orders: Array<{ withdrawalId: string; address: string; amount: bigint }>;
  bare: (p: BtcPayout) => string;
  bareMs: number[];
  /** A new destination: each run pays new addresses (a transaction is stored once). */
  fresh: () => string;
}): Promise<{ workerMs: number; bareMs: number }> {
  const { store, chain } = ctx;
  const config = parseConfig({ chains: [bcoinChainEntry('http://x:y@127.0.0.1:1/', { confirmations: 2 })] });
  const catalog = new Catalog(config.chains, config.fiat);
  const sealer = new Sealer(randomBytes(32));
  const outbox = new Outbox();
  // The claim keeps the hold (no money moves): the service needs only its store, catalog, outbox and clock.
  const withdrawals = new WithdrawalService({ store, catalog, outbox, clock: systemClock, money: {} as MoneyMovement } as unknown as WithdrawalServiceDeps);
  let changeIndex = 1000;
  const node = {
    tip: async () => ({ height: 1000, hash: '00'.repeat(32) }),
    feeQuote: async () => ({ kind: 'btc' as const, satPerVbyte: 5, source: 'node' as const }),
    broadcast: async () => '',
  };
  const rail = new BtcRail(
    {
      chain,
      signer: localSigner(ctx.signer),
      addresses: { allocate: async () => ({ address: ctx.change.address, derivation_path: ctx.change.path, derivation_index: changeIndex++ }) as AddressRow },
      clock: systemClock,
    },
    node,
    feeCeilings([chain], systemClock).get(chain.id)!,
  );
  const payouts = new PayoutStore(sealer);
  const worker = new PayoutWorker({
    chain,
    rail,
    store,
    payouts,
    withdrawals,
    money: {} as MoneyMovement,
    catalog,
    clock: systemClock,
    logger: silentLogger,
    settings: { batchWindowMs: 0, replaceAfterBlocks: 6 },
    securityLog: async () => {},
    checkpoint: (point) => {
      if (point === 'stored') throw new Stored();
    },
  });
  const coin = coinId(chain.id, 'native');
  const workerMs: number[] = [];
  const bareMs: number[] = [];
  const signal = new AbortController().signal;
  for (let run = 0; run < RUNS + 1; run++) {
    const at = new Date(Date.now() - 60_000).toISOString();
    await store.write(async (em) => {
      for (const [i, o] of ctx.orders.entries()) {
        await insertRow(em, 'withdrawals', {
          id: `${run}-${String(i).padStart(4, '0')}-${randomBytes(4).toString('hex')}`,
          account_id: ACCOUNT,
          status: 'pending',
          payout_id: null,
          coin_id: coin,
          amount: Amount.fromBaseUnits(o.amount, 8).toString(),
          to_address: ctx.fresh(),
          comment: null,
          review_reason: null,
          txid: null,
          confirmations: 0,
          failure_reason: null,
          platform_fee: '0',
          network_fee_reserved: '0.0000125',
          network_fee_charged: null,
          network_fee_mode: 'reserved',
          total_debit: '0.0010125',
          api_key_id: 'bench-key',
          decided_by: null,
          decided_at: null,
          signed_tx: null,
          candidate_txids: '[]',
          claimed_by: null,
          claimed_at: null,
          created_at: at,
          updated_at: at,
          completed_at: null,
        } satisfies WithdrawalRow);
      }
    });
    const t0 = process.hrtime.bigint();
    try {
      await worker.run(signal);
      throw new Error('the worker stored no payout');
    } catch (err) {
      if (!(err instanceof Stored)) throw err;
    }
    const took = ms(t0);
    const [row] = await rawQuery<{ id: string; reservation: string }>(store.read, `SELECT id, reservation FROM chain_payouts WHERE status = 'signed'`);
    const [cand] = await rawQuery<{ txid: string; raw_sealed: string; fee: string; data: string }>(
      store.read,
      `SELECT * FROM chain_payout_candidates WHERE payout_id = ${placeholder(store.read, 1)}`,
      [row!.id],
    );
    const data = JSON.parse(cand!.data) as {
      inputs: Array<{ transferId: string; txid: string; vout: number; value: string; path: string }>;
      outputs: Array<{ vout: number; address: string; value: string; withdrawalId: string | null }>;
      vsize: number;
      satPerVbyte: number;
    };
    const payout: BtcPayout = {
      payoutId: row!.reservation,
      chainId: chain.id,
      accountId: ACCOUNT,
      txid: cand!.txid,
      raw: '',
      fee: BigInt(cand!.fee),
      satPerVbyte: data.satPerVbyte,
      vsize: data.vsize,
      inputs: data.inputs.map((c) => ({ ...c, value: BigInt(c.value) })),
      outputs: data.outputs.map((o) => ({ ...o, value: BigInt(o.value) })),
    };
    if (payout.outputs.filter((o) => o.withdrawalId).length !== ctx.orders.length) throw new Error('the worker did not batch every withdrawal');
    const raw = ctx.bare(payout);
    const bareTook = ctx.bareMs.pop()!;
    if (raw !== sealer.open(cand!.raw_sealed, cells.payoutCandidate(row!.id, 0))) throw new Error('the worker and bitcoinjs-lib signed different transactions');
    if (run > 0) {
      workerMs.push(took);
      bareMs.push(bareTook);
    }
    // Out of the way of the next run: the payout given up, its withdrawals done with, its coins free.
    await store.write(async (em) => {
      await rawRun(em, `UPDATE chain_payouts SET status = 'failed' WHERE id = ${placeholder(em, 1)}`, [row!.id]);
      await rawRun(em, `UPDATE withdrawals SET status = 'failed' WHERE status = 'processing'`);
      await releaseCoins(em, row!.reservation);
    });
  }
  return { workerMs: median(workerMs), bareMs: median(bareMs) };
}
