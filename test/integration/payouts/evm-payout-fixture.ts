/**
 * EVM payouts as a merchant sees them, on a real anvil: the daemon watching it (3 confirmations,
 * polling every 50 ms) with its payout worker and sweeps, a verified merchant whose key may
 * withdraw (its security changes a day old, so payouts do not go to review), the chain's gas
 * station funded, a miner that keeps blocks coming while sweeps and payouts wait for
 * confirmations, and a check that the books hold exactly what the chain shows at the wallet's
 * addresses (what `coinkeep ledger reconcile` compares).
 */
import { randomBytes } from 'node:crypto';
import { getAddress, parseEther } from 'ethers';
import { coinId } from '../../../src/catalog/coins';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import type { DaemonOptions } from '../../../src/daemon/main';
import { anvilChainEntry } from '../../../src/dev/anvil';
import type { AnvilNode } from '../../../src/dev/anvil-node';
import { AddressEntity } from '../../../src/db/entities/chain';
import { LedgerBalanceEntity } from '../../../src/db/entities/money';
import { EXTERNAL_BOOK } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { Amount } from '../../../src/shared/amount';
import { payFromAnvil, startAnvil } from '../../helpers/anvil';
import { EvmProvider, type ProviderRules } from '../../helpers/evm-provider';
import { waitScannedTo, waitWatched } from '../../helpers/chain-scan';
import { OtpSource, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { payoutMerchant } from '../../helpers/payout-fixture';
import { ApiClient } from '../../helpers/invoice-fixture';
import { CONFIRMATIONS, FAST_WATCH, RATES, type Ticker } from '../chains/evm/evm-fixture';
import { waitUntil } from '../../helpers/poll';

export { CONFIRMATIONS };

/** An address nobody in the tests owns, EIP-55. */
export const elsewhere = (): string => getAddress('0x' + randomBytes(20).toString('hex'));
export const eth = (s: string): bigint => parseEther(s);

export interface EvmPayoutFixture {
  node: AnvilNode;
  /** With the option `provider`: the provider emulator the daemon reaches the node through. */
  provider: EvmProvider | null;
  td: TestDaemon;
  api: ApiClient;
  accountId: string;
  chainId: string;
  /** The account's owner (an owner since a day) and fresh two-factor codes of theirs. */
  owner: string;
  otp: OtpSource;
  usdt: string;
  coin: Record<Ticker, string>;
  adapter: EvmAdapter;
  gasStation: string;
  /** Base units of `ticker` at `address` on the node. */
  onChain(address: string, ticker: Ticker): Promise<bigint>;
  createInvoice(ticker: Ticker, amount: string): Promise<any>;
  pay(to: string, ticker: Ticker, amount: string): Promise<string>;
  /** Pays an invoice of `amount`, mines it to confirmation, and resolves once it is credited. */
  paidInvoice(ticker: Ticker, amount: string): Promise<{ id: string; address: string }>;
  /** `paidInvoice`, then mines until its deposit is swept into the treasury and nothing is on its way; no block is mined after. */
  paidAndSwept(ticker: Ticker, amount: string): Promise<void>;
  invoice(id: string): Promise<any>;
  withdraw(body: Record<string, unknown>): Promise<any>;
  get(id: string): Promise<any>;
  waitWithdrawal(id: string, ok: (w: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
  balance(ticker: Ticker): Promise<{ available: string; hold: string }>;
  transactions(query: string): Promise<any[]>;
  /** Mines a block every `ms` until the returned function is called. */
  miner(ms?: number): () => Promise<void>;
  /** Waits until no sweep or top-up is on its way and every finished payout's cost is booked (keep mining meanwhile). */
  quiet(): Promise<void>;
  /** Per coin: what the books (all but `external`) hold against the chain's balances at the wallet's addresses; and ledger verify. */
  booksMatchChain(): Promise<{ ok: boolean; detail: string }>;
  until(ok: () => Promise<boolean>, what: string | (() => string), timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface EvmPayoutFixtureOptions {
  gasStationEth?: string;
  payouts?: Record<string, unknown>;
  chain?: Record<string, unknown>;
  daemon?: Pick<DaemonOptions, 'adapterFor' | 'logger'>;
  env?: Record<string, string>;
  /** The provider emulator's rules between the daemon and anvil (the fixture's own reads go to anvil). */
  provider?: Partial<ProviderRules>;
}

export async function startEvmPayoutFixture(opts: EvmPayoutFixtureOptions = {}): Promise<EvmPayoutFixture> {
  const { node, usdt } = await startAnvil();
  const provider = opts.provider ? await EvmProvider.start(node.rpcUrl, opts.provider) : null;
  const entry = anvilChainEntry(provider?.url ?? node.rpcUrl, usdt, { confirmations: CONFIRMATIONS, options: FAST_WATCH, ...opts.chain });
  const td = await startTestDaemon(
    { chains: [entry], rates: RATES, payouts: { batch_window_seconds: 0, replace_after_blocks: 3, ...opts.payouts } },
    opts.daemon ?? {},
  );
  await waitWatched(td);
  const chain = td.daemon.config.chains[0]!;
  const adapter = new EvmAdapter({ ...chain, rpc_url: node.rpcUrl });
  const gasStation = td.daemon.addresses.gasStation(chain.id).address;
  if (opts.gasStationEth !== '0') await payFromAnvil(node, 'native', gasStation, opts.gasStationEth ?? '10', 18);

  const clock = { now: () => new Date() };
  const { m, key, otp } = await payoutMerchant(td.daemon, clock);
  const store = td.daemon.store;
  const api = new ApiClient(td.url, key.key_id, key.secret);
  const coin = { ETH: coinId(chain.id, 'native'), USDT: coinId(chain.id, usdt) };
  const decimals = { ETH: 18, USDT: 6 };
  const until = (ok: () => Promise<boolean>, what: string | (() => string), timeoutMs = 30_000) => waitUntil(what, ok, timeoutMs);
  const read = async (target: string) => {
    const res = await api.get(target);
    if (res.status !== 200) throw new Error(`GET ${target}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const f: EvmPayoutFixture = {
    node,
    provider,
    td,
    api,
    accountId: m.accountId,
    owner: m.owner,
    otp,
    chainId: chain.id,
    usdt,
    coin,
    adapter,
    gasStation,
    onChain: async (address, ticker) => (await adapter.balances([address], ticker === 'ETH' ? 'native' : usdt))[0]!,
    async createInvoice(ticker, amount) {
      const res = await api.post('/v1/invoices', { amount, currency: ticker, coin_id: coin[ticker] });
      if (res.status !== 201) throw new Error(`invoice: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    pay: (to, ticker, amount) => payFromAnvil(node, ticker === 'ETH' ? 'native' : usdt, to, amount, decimals[ticker]),
    async paidInvoice(ticker, amount) {
      const inv = await f.createInvoice(ticker, amount);
      await f.pay(inv.address, ticker, amount);
      await node.mine(CONFIRMATIONS - 1);
      await waitScannedTo(td, await node.blockNumber(), 10_000);
      await until(async () => (await f.invoice(inv.id)).status === 'paid', 'the invoice paid');
      return { id: inv.id, address: inv.address };
    },
    async paidAndSwept(ticker, amount) {
      await f.paidInvoice(ticker, amount);
      const stop = f.miner();
      try {
        await f.until(
          async () => (await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n > 0,
          'swept',
        );
        await f.quiet();
      } finally {
        await stop();
      }
    },
    invoice: (id) => read(`/v1/invoices/${id}`),
    async withdraw(body) {
      const res = await api.post('/v1/withdrawals', body);
      if (res.status !== 201) throw new Error(`withdraw: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    },
    get: (id) => read(`/v1/withdrawals/${id}`),
    async waitWithdrawal(id, ok, what, timeoutMs = 30_000) {
      let last: any;
      await until(
        async () => ok((last = await f.get(id))),
        () => `${what}: ${JSON.stringify(last)}`,
        timeoutMs,
      );
      return last;
    },
    async balance(ticker) {
      const b = (await read('/v1/balances')).items.find((i: { coin_id: string }) => i.coin_id === coin[ticker]);
      return { available: b?.available ?? '0', hold: b?.hold ?? '0' };
    },
    transactions: async (query) => (await read(`/v1/transactions?${query}`)).items,
    miner(ms = 150) {
      let on = true;
      const loop = (async () => {
        while (on) {
          await node.mine(1).catch(() => undefined);
          await new Promise((r) => setTimeout(r, ms));
        }
      })();
      return async () => {
        on = false;
        await loop;
      };
    },
    async quiet() {
      await until(async () => {
        const [row] = await store.read.query(
          `SELECT COUNT(*) AS n FROM account_sends e LEFT JOIN withdrawals w ON w.id = e.withdrawal_id ` +
            `WHERE e.status IN ('signed', 'broadcast') OR (e.kind = 'payout' AND e.status = 'reserved' AND w.status IN ('completed', 'failed') ` +
            `AND (e.booked_at IS NULL OR (w.status = 'completed' AND w.updated_at > e.booked_at)))`,
        );
        return Number(row.n) === 0;
      }, 'every send final and booked');
    },
    async booksMatchChain() {
      const report = await store.snapshot((em) => verifyLedger(em));
      const rows = await store.read.find(LedgerBalanceEntity);
      const addresses = await store.read.find(AddressEntity, { where: { chain_id: chain.id } });
      const lines: string[] = [];
      let ok = report.ok;
      for (const ticker of ['ETH', 'USDT'] as const) {
        const external = rows.find((r) => r.book === EXTERNAL_BOOK && r.coin_id === coin[ticker]);
        const books = external ? Amount.of(external.debits_posted).minus(Amount.of(external.credits_posted)) : Amount.zero();
        const balances = await adapter.balances(
          addresses.map((a) => a.address),
          ticker === 'ETH' ? 'native' : usdt,
        );
        const held = Amount.fromBaseUnits(
          balances.reduce((s, b) => s + b, 0n),
          decimals[ticker],
        );
        if (!books.eq(held)) ok = false;
        lines.push(`${ticker}: books ${books.toString()}, chain ${held.toString()}`);
      }
      return {
        ok,
        detail: `${lines.join('; ')}; verify ${JSON.stringify({ ok: report.ok, problems: report.problems.slice(0, 3), differences: report.differences.slice(0, 3) })}`,
      };
    },
    until,
    async stop() {
      await td.stop();
      await provider?.stop();
      await node.kill();
    },
  };
  return f;
}
