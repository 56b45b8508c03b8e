/**
 * What the simulator drives: a bcoin regtest node (no transaction index), anvil with the test USDT,
 * a webhook sink, and the real daemon as a child process (sim-daemon.ts) on one data dir that it
 * may kill -9 and start again. The Tron node stand-in runs in this process (mined by the steps, as
 * anvil and bcoin are), and the daemon reaches anvil through the provider emulator
 * (test/helpers/evm-provider.ts), whose faults the simulator turns on and off. A second anvil (chain
 * `polygon`, its POL and its own test USDT) is reached directly: the merchants' EVM invoices are
 * paid there by mistake (strays, PRODUCT §17). The merchants are made before the first start by the daemon in this
 * process on the same data dir (as the crash tests do), each a verified account with a withdraw key.
 * With `postgres` the database is a fresh PostgreSQL one and two such daemons run on it, each with
 * its own data dir (config, admin socket, pid file, log) and the same master and signer keys.
 */
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { Block, Transaction } from 'bitcoinjs-lib';
import path from 'node:path';
import { coinId } from '../../src/catalog/coins';
import { anvilChainEntry } from '../../src/dev/anvil';
import type { AnvilNode } from '../../src/dev/anvil-node';
import type { BcoinNode } from '../../src/dev/bcoin-node';
import { payFromAnvil, startAnvil } from '../helpers/anvil';
import { sats, startBcoin } from '../helpers/bcoin';
import { spendableCoins } from '../../src/chains/btc/payouts/coin-store';
import { placeholder, rawQuery } from '../../src/db/raw';
import { ApiClient } from '../helpers/invoice-fixture';
import { CliEnv, pastStartSecond, PROJECT_ROOT, until, type Running } from '../helpers/cli';
import { startPreparedDaemon, testConfig } from '../helpers/daemon';
import { payoutMerchant } from '../helpers/payout-fixture';
import { WebhookSink } from '../helpers/webhook-sink';
import { startBtcRpcProxy, type BtcRpcProxy } from '../helpers/btc-rpc-proxy';
import type { PayoutCheckpoint } from '../../src/payouts/payout-worker';
import { btcChain, CONFIRMATIONS as BTC_CONFIRMATIONS } from '../integration/chains/btc/btc-fixture';
import { FAST_WATCH, RATES } from '../integration/chains/evm/evm-fixture';
import type { PlantName } from './planted-bugs';
import { EvmProvider } from '../helpers/evm-provider';
import { TronNode } from '../helpers/tron-node';
import { STATION_TRX, tronEntry, units } from '../integration/payouts/tron-payout-fixture';
import type { SeededRandom } from '../helpers/seeded-random';
import { masterKeyPath } from '../../src/db/seal';
import { signerKeyPath } from '../../src/wallet/signer-process/vault';
import { createPostgres, type PostgresDatabase } from '../helpers/pg-database';

const SIM_DAEMON = path.join(PROJECT_ROOT, 'dist', 'test', 'sim', 'sim-daemon.js');
export const EVM_CONFIRMATIONS = 3;
export const TRON_CONFIRMATIONS = 3;
/** The second EVM chain: the network a payment arrives on by mistake (its id, EIP-155 chain id and native coin). */
export const WRONG_EVM = { id: 'polygon', chainId: 137, native: 'POL' } as const;
export { BTC_CONFIRMATIONS };

export interface SimCoin {
  id: string;
  ticker: 'BTC' | 'ETH' | 'USDT' | 'TRX' | 'POL';
  /** What names it among the run's coins (the ticker, or `USDT-TRC20` for the Tron stand-in's USDT). */
  name: 'BTC' | 'ETH' | 'USDT' | 'TRX' | 'USDT-TRC20' | 'POL' | 'USDT-POLYGON';
  network: 'bitcoin' | 'ethereum' | 'tron' | 'polygon';
  decimals: number;
  confirmations: number;
}

/** A paid invoice a merchant starts the run with. */
export interface SimFunding {
  merchant: number;
  ticker: SimCoin['ticker'];
  id: string;
  address: string;
  due: string;
  ttl: string;
  txid: string;
  /** The coin's name among the run's coins where the ticker is not enough (`USDT-TRC20`). */
  name?: SimCoin['name'];
}

export interface SimMerchant {
  accountId: string;
  keyId: string;
  /** The key's current secret (a rotation replaces it). */
  secret: string;
  /** The owner's email and TOTP secret (the CLI acts as them). */
  owner: string;
  ownerTotp: string;
}

/** One daemon of the run: its own data dir and config (env), the run of it now, and the checkpoint that run kills itself at. */
export interface SimDaemon {
  /** 1 or 2: how the step list names it. */
  readonly n: number;
  readonly env: CliEnv;
  running: Running | null;
  url: string;
  crashAt: PayoutCheckpoint | null;
  /** The simulation's requests sent to it (API and page). */
  requests: number;
}

export class World {
  /** The daemons: one on SQLite, two on one PostgreSQL database. */
  readonly daemons: SimDaemon[];
  /** How many times a daemon was started; its log goes to daemon-N.log in the run's folder. */
  starts = 0;
  /** The Tron node stand-in (in this process): blocks only when a step mines them. */
  tron!: TronNode;
  /** The provider emulator between the daemon and anvil (the daemon's EVM rpc_url is its URL). */
  evmProvider!: EvmProvider;
  /** The second EVM chain's anvil (the daemon reaches it directly) and its test USDT. */
  evm2!: AnvilNode;
  usdt2!: string;
  /** The second EVM chain's coins: never invoiced nor withdrawn, only sent by mistake (strays). */
  wrongCoins: SimCoin[] = [];
  private constructor(
    /** The first block of the run's own (the merchants' funding payments are in it or later). */
    readonly fundedFrom: number,
    readonly dir: string,
    readonly env: CliEnv,
    readonly btc: BcoinNode,
    readonly btcProxy: BtcRpcProxy,
    readonly evm: AnvilNode,
    readonly usdt: string,
    readonly sink: WebhookSink,
    readonly coins: SimCoin[],
    readonly merchants: SimMerchant[],
    /** The paid Bitcoin invoices each merchant starts with. */
    readonly funding: SimFunding[],
    private readonly plant: PlantName | undefined,
    /** The PostgreSQL database both daemons share (null: each run on its own SQLite file). */
    readonly pg: PostgresDatabase | null,
    /** What every daemon child gets in its environment (the shared keys under PostgreSQL). */
    private readonly childEnv: Record<string, string>,
    second: CliEnv | null,
  ) {
    this.daemons = [env, ...(second ? [second] : [])].map((e, i) => ({ n: i + 1, env: e, running: null, url: '', crashAt: null, requests: 0 }));
  }

  static async start(opts: { merchants: number; plant?: PlantName; postgres?: boolean }): Promise<World> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-sim-'));
    // The nodes start at once: the world's start waits for the slowest, not their sum.
    const [btc, { node: evm, usdt }, { node: evm2, usdt: usdt2 }] = await Promise.all([startBcoin(), startAnvil(), startAnvil({ chainId: WRONG_EVM.chainId })]);
    // The daemon reaches bcoin through a proxy that can lose a broadcast's answer (a node answering "unknown").
    const btcProxy = await startBtcRpcProxy(btc.rpcUrl);
    const evmProvider = await EvmProvider.start(evm.rpcUrl);
    const tron = await TronNode.start();
    tron.mine(2);
    const sink = await WebhookSink.start();
    const chains = [
      btcChain(btc, {}, { port: btcProxy.port }),
      anvilChainEntry(evmProvider.url, usdt, {
        confirmations: EVM_CONFIRMATIONS,
        options: FAST_WATCH,
        // Payments stay where they arrive until a withdrawal needs them swept (the gas station is funded for USDT's).
        sweep: { min: { ETH: '1000000', USDT: '1000000000' } },
      }),
      // The stand-in answers from the simulator's process, busy with the checks: a longer timeout than anvil's and bcoin's.
      tronEntry(tron, { options: { poll_interval_ms: 500, rpc_timeout_ms: 15_000 } }),
      // The wrong network: it watches every EVM invoice's address; nothing is swept there.
      anvilChainEntry(evm2.rpcUrl, usdt2, {
        id: WRONG_EVM.id,
        chain_id: WRONG_EVM.chainId,
        native: { ticker: WRONG_EVM.native, decimals: 18 },
        confirmations: EVM_CONFIRMATIONS,
        // Polled less often than the first chain: its payments need only be seen by the quiet checks.
        options: { ...FAST_WATCH, poll_interval_ms: 500 },
        sweep: { min: { [WRONG_EVM.native]: '1000000', USDT: '1000000000' } },
      }),
    ];
    // TRX has a rate too: a Tron token withdrawal's network fee is priced in TRX and reserved in the coin withdrawn.
    const rates = {
      sources: [{ ...RATES.sources[0]!, rates: { ...RATES.sources[0]!.rates, TRX: { USD: '0.25', EUR: '0.23' }, POL: { USD: '0.5', EUR: '0.45' } } }],
    };
    const pg = opts.postgres ? await createPostgres() : null;
    const overrides = {
      chains,
      rates,
      payouts: { batch_window_seconds: 0, replace_after_blocks: 3 },
      log_level: 'info',
      ...(pg ? { database: { url: pg.url } } : {}),
    };
    const env = new CliEnv(overrides);
    const setup = await startPreparedDaemon(testConfig(env.dataDir, overrides));
    const merchants: SimMerchant[] = [];
    const fundedFrom = (await btc.height()) + 1;
    const funding: SimFunding[] = [];
    try {
      // Each merchant starts with two confirmed Bitcoin payments, so withdrawals happen from the first steps.
      const chainId = setup.config.chains[0]!.id;
      for (let i = 0; i < opts.merchants; i++) {
        const { m, key } = await payoutMerchant(setup);
        merchants.push({ accountId: m.accountId, keyId: key.key_id, secret: key.secret, owner: m.owner, ownerTotp: m.ownerTotp });
        const api = new ApiClient(setup.apiUrl, key.key_id, key.secret);
        for (const amount of ['0.2', '0.1']) {
          const inv = await api.post('/v1/invoices', { amount, currency: 'BTC', coin_id: coinId('bitcoin', 'native') });
          if (inv.status !== 201) throw new Error(`funding invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
          const txid = await btc.pay([{ address: inv.body.address, value: sats(amount) }]);
          funding.push({ merchant: i, ticker: 'BTC', id: inv.body.id, address: inv.body.address, due: amount, ttl: inv.body.ttl_expires_at, txid });
        }
      }
      // And with an ETH and a USDT payment, so EVM withdrawals do too; the gas station pays the USDT sweeps' gas.
      const evmChain = setup.config.chains[1]!.id;
      await payFromAnvil(evm, 'native', setup.addresses.gasStation(evmChain).address, '10', 18);
      for (const [i, m] of merchants.entries()) {
        const api = new ApiClient(setup.apiUrl, m.keyId, m.secret);
        for (const [ticker, amount, asset, decimals] of [
          ['ETH', '1', 'native', 18],
          ['USDT', '200', usdt, 6],
        ] as const) {
          const inv = await api.post('/v1/invoices', { amount, currency: ticker, coin_id: coinId('ethereum', asset) });
          if (inv.status !== 201) throw new Error(`funding invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
          const txid = await payFromAnvil(evm, asset, inv.body.address, amount, decimals);
          funding.push({ merchant: i, ticker, id: inv.body.id, address: inv.body.address, due: amount, ttl: inv.body.ttl_expires_at, txid });
        }
      }
      // And with a TRX and a Tron USDT payment; the Tron gas station stakes for the token sweeps' energy.
      const tronChain = setup.config.chains[2]!.id;
      tron.pay(setup.addresses.gasStation(tronChain).address, 'native', STATION_TRX * 1_000_000n);
      for (const [i, m] of merchants.entries()) {
        const api = new ApiClient(setup.apiUrl, m.keyId, m.secret);
        for (const [ticker, name, amount, asset] of [
          ['TRX', 'TRX', '2000', 'native'],
          ['USDT', 'USDT-TRC20', '200', tron.usdt],
        ] as const) {
          const inv = await api.post('/v1/invoices', { amount, currency: ticker, coin_id: coinId(tronChain, asset) });
          if (inv.status !== 201) throw new Error(`funding invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
          const txid = tron.pay(inv.body.address, asset, units(amount));
          funding.push({ merchant: i, ticker, name, id: inv.body.id, address: inv.body.address, due: amount, ttl: inv.body.ttl_expires_at, txid });
        }
      }
      await btc.mine(BTC_CONFIRMATIONS);
      await evm.mine(EVM_CONFIRMATIONS);
      tron.mine(TRON_CONFIRMATIONS);
      for (const m of merchants) {
        await until(async () => (await spendableCoins(setup.store.read, chainId, m.accountId)).length === 2, 60_000, 'the funding payments spendable');
        const api = new ApiClient(setup.apiUrl, m.keyId, m.secret);
        let last = '';
        await until(
          async () => {
            const items = ((await api.get('/v1/balances')).body?.items ?? []) as Array<{ network: string; available: string }>;
            last = JSON.stringify(items);
            return (
              items.filter((b) => b.network === 'ethereum' && Number(b.available) > 0).length === 2 &&
              items.filter((b) => b.network === 'tron' && Number(b.available) > 0).length === 2
            );
          },
          60_000,
          'the EVM and Tron funding payments credited',
        ).catch((err: Error) => {
          throw new Error(`${err.message} (balances: ${last})`);
        });
      }
      // The second merchant's invoices expire after 2 minutes (the account setting's default is
      // 30): long runs pay many of them after expiry (late payments), and a final underpayment's top-up.
      if (merchants.length > 1)
        await setup.store.write((em) =>
          rawQuery(em, `UPDATE accounts SET invoice_ttl_minutes = 2 WHERE id = ${placeholder(em, 1)}`, [merchants[1]!.accountId]),
        );
    } finally {
      await setup.stop();
    }
    // The second daemon opens what the first sealed: both get the keys the setup made in the first's data dir.
    const second = pg ? new CliEnv(overrides) : null;
    const childEnv: Record<string, string> = pg
      ? {
          COINKEEP_MASTER_KEY: readFileSync(masterKeyPath(env.dataDir), 'utf8').trim(),
          COINKEEP_SIGNER_KEY: readFileSync(signerKeyPath(env.dataDir), 'utf8').trim(),
        }
      : {};
    const coins: SimCoin[] = [
      { id: coinId('bitcoin', 'native'), ticker: 'BTC', name: 'BTC', network: 'bitcoin', decimals: 8, confirmations: BTC_CONFIRMATIONS },
      { id: coinId('ethereum', 'native'), ticker: 'ETH', name: 'ETH', network: 'ethereum', decimals: 18, confirmations: EVM_CONFIRMATIONS },
      { id: coinId('ethereum', usdt), ticker: 'USDT', name: 'USDT', network: 'ethereum', decimals: 6, confirmations: EVM_CONFIRMATIONS },
      { id: coinId('tron', 'native'), ticker: 'TRX', name: 'TRX', network: 'tron', decimals: 6, confirmations: TRON_CONFIRMATIONS },
      { id: coinId('tron', tron.usdt), ticker: 'USDT', name: 'USDT-TRC20', network: 'tron', decimals: 6, confirmations: TRON_CONFIRMATIONS },
    ];
    const world = new World(fundedFrom, dir, env, btc, btcProxy, evm, usdt, sink, coins, merchants, funding, opts.plant, pg, childEnv, second);
    world.tron = tron;
    world.evmProvider = evmProvider;
    world.evm2 = evm2;
    world.usdt2 = usdt2;
    world.wrongCoins = [
      { id: coinId(WRONG_EVM.id, 'native'), ticker: 'POL', name: 'POL', network: 'polygon', decimals: 18, confirmations: EVM_CONFIRMATIONS },
      { id: coinId(WRONG_EVM.id, usdt2), ticker: 'USDT', name: 'USDT-POLYGON', network: 'polygon', decimals: 6, confirmations: EVM_CONFIRMATIONS },
    ];
    return world;
  }

  /** Starts daemon `d` (optionally one that kills itself at a payout checkpoint); resolves once it serves. */
  async startDaemon(d: SimDaemon, crashAt?: PayoutCheckpoint): Promise<void> {
    const args = [...(crashAt ? ['--crash-at', crashAt] : []), ...(this.plant ? ['--plant', this.plant] : [])];
    const running = d.env.spawn(SIM_DAEMON, args, { env: this.childEnv });
    const n = ++this.starts;
    // Two daemons: daemon-N-dK.log, the Nth start, of daemon K.
    const name = this.daemons.length === 1 ? `daemon-${n}` : `daemon-${n}-d${d.n}`;
    running.child.once('exit', () => this.saveLog(name, running));
    d.running = running;
    d.crashAt = crashAt ?? null;
    const startedAt = Date.now();
    d.url = (await running.waitFor(/"api_url":"(http:\/\/127\.0\.0\.1:\d+)"/, 90_000))[1]!;
    // After a crash the daemon refuses every signature stamped up to the second it started in.
    await pastStartSecond(startedAt);
  }

  /**
   * A reorganisation of `depth` blocks on bcoin, as Bitcoin Core makes one: the blocks are taken out
   * (`invalidateblock`), their transactions and the mempool's go back to the mempool, and a longer
   * branch is mined. bcoin's `invalidateblock` empties its mempool and keeps none of the blocks'
   * transactions: left alone, it would erase the merchants' funding payments (a reorganisation at
   * the funding block) and every payout spending them for good, which no real reorganisation does.
   * Returns how many transactions went back to the mempool.
   */
  async reorgBtc(depth: number): Promise<number> {
    const rpc = this.btc.rpc;
    const tip = await this.btc.height();
    const raws: string[] = [];
    for (let h = tip - depth + 1; h <= tip; h++) {
      const block = Block.fromHex(await rpc.call<string>('getblock', [await rpc.call<string>('getblockhash', [h]), false]));
      for (const tx of (block.transactions ?? []).slice(1)) raws.push(tx.toHex());
    }
    for (const txid of await this.btc.mempool()) {
      const [got] = await rpc.batch([{ method: 'getrawtransaction', params: [txid, false] }]);
      if (got!.ok) raws.push(got!.result as string);
    }
    await this.btc.invalidateBlock(await rpc.call<string>('getblockhash', [tip - depth + 1]));
    // Parents before children; one bcoin refuses (a conflict) is left out, as Core would leave it.
    const txids = new Set<string>();
    for (const raw of raws) {
      const [sent] = await rpc.batch([{ method: 'sendrawtransaction', params: [raw] }]);
      if (sent!.ok) txids.add(Transaction.fromHex(raw).getId());
    }
    // bcoin answers sendrawtransaction before its mempool has the transaction: a block mined at once would leave it out.
    const deadline = Date.now() + 5_000;
    for (;;) {
      const pool = new Set(await this.btc.mempool());
      if ([...txids].every((t) => pool.has(t)) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await this.btc.mine(depth + 1);
    return txids.size;
  }

  /** Whether daemon `d` runs; without `d`, whether every daemon does. */
  alive(d?: SimDaemon): boolean {
    if (!d) return this.daemons.every((x) => this.alive(x));
    return d.running !== null && d.running.child.exitCode === null && d.running.child.signalCode === null;
  }

  /** kill -9 of daemon `d`; resolves once it is gone. */
  async kill(d: SimDaemon): Promise<void> {
    const r = d.running;
    if (!r) return;
    if (this.alive(d)) r.child.kill('SIGKILL');
    await r.exited;
  }

  /** A daemon chosen by `rng` (which it leaves untouched when there is one): the one chosen if it runs, else one that runs. */
  pickDaemon(rng: SeededRandom): SimDaemon {
    if (this.daemons.length === 1) return this.daemons[0]!;
    const picked = this.daemons[rng.int(0, this.daemons.length - 1)]!;
    return this.alive(picked) ? picked : (this.daemons.find((x) => this.alive(x)) ?? picked);
  }

  /** The CLI of a running daemon (the first one's when it runs): it reaches that daemon's admin socket, the database is the same. */
  cli(): CliEnv {
    return (this.daemons.find((d) => this.alive(d)) ?? this.daemons[0]!).env;
  }

  /** How the step list names daemon `d` (nothing when it is the only one). */
  label(d: SimDaemon): string {
    return this.daemons.length === 1 ? 'the daemon' : `daemon ${d.n}`;
  }

  /** Every log line the daemons wrote so far (the running ones' included). */
  logs(): string[] {
    return this.logTexts.concat(this.daemons.filter((d) => this.alive(d)).map((d) => d.running!.stdout + d.running!.stderr));
  }

  private readonly logTexts: string[] = [];

  private saveLog(name: string, r: Running): void {
    const text = r.stdout + r.stderr;
    this.logTexts.push(text);
    appendFileSync(path.join(this.dir, `${name}.log`), text);
  }

  async stop(): Promise<void> {
    for (const d of this.daemons) if (this.alive(d)) await d.running!.stop('SIGTERM');
    await this.sink.close();
    await this.btcProxy.close();
    await this.btc.kill();
    await this.evm.kill();
    await this.evm2.kill();
    await this.evmProvider.stop();
    await this.tron.stop();
  }
}
