/**
 * EVM payouts on a real anvil: the EVM invoice fixture (the daemon watching anvil, 3
 * confirmations, a merchant with a signed client), its gas station funded, a miner that keeps
 * blocks coming while the daemon's sweeps and payouts wait for confirmations, and a check that the
 * books hold exactly what the chain shows at the wallet's addresses.
 */
import { parseEther } from 'ethers';
import { LedgerBalanceEntity } from '../../../src/db/entities/money';
import { AddressEntity } from '../../../src/db/entities/chain';
import { EXTERNAL_BOOK } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { Amount } from '../../../src/shared/money';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import { payFromAnvil } from '../../helpers/anvil';
import { CONFIRMATIONS, startEvmFixture, type EvmFixture, type Ticker } from '../chains/evm/evm-fixture';

export { CONFIRMATIONS };

export interface EvmPayoutFixture extends EvmFixture {
  chainId: string;
  adapter: EvmAdapter;
  gasStation: string;
  decimals: Record<Ticker, number>;
  /** Base units of `ticker` at `address` on the node. */
  onChain(address: string, ticker: Ticker): Promise<bigint>;
  /** Pays an invoice of `amount` and mines it to confirmation; resolves once it is credited. */
  paidInvoice(ticker: Ticker, amount: string): Promise<{ id: string; address: string }>;
  /** Mines a block every `ms` until the returned function is called. */
  miner(ms?: number): () => Promise<void>;
  /** Per coin: what the books (all but `external`) hold, against the chain's balances at the wallet's addresses; ledger verify too. */
  booksMatchChain(): Promise<{ ok: boolean; detail: string }>;
  /** Polls `ok` until it holds; throws naming `what` at the deadline. */
  until(ok: () => Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
}

export async function startEvmPayoutFixture(opts: { gasStationEth?: string; watch?: Record<string, unknown> } = {}): Promise<EvmPayoutFixture> {
  const f = await startEvmFixture({ watch: opts.watch });
  const chain = f.td.daemon.config.chains[0]!;
  const adapter = new EvmAdapter(chain);
  const gasStation = f.td.daemon.addresses.gasStation(chain.id).address;
  if (opts.gasStationEth !== '0') await payFromAnvil(f.node, 'native', gasStation, opts.gasStationEth ?? '10', 18);
  const decimals = { ETH: 18, USDT: 6 };
  const until = async (ok: () => Promise<boolean>, what: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await ok())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const onChain = async (address: string, ticker: Ticker) => (await adapter.balances([address], ticker === 'ETH' ? 'native' : f.usdt))[0]!;
  return {
    ...f,
    chainId: chain.id,
    adapter,
    gasStation,
    decimals,
    onChain,
    until,
    async paidInvoice(ticker, amount) {
      const inv = await f.createInvoice(ticker, amount);
      await f.pay(inv.address, ticker, amount);
      await f.node.mine(CONFIRMATIONS - 1);
      await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
      return { id: inv.id, address: inv.address };
    },
    miner(ms = 150) {
      let on = true;
      const loop = (async () => {
        while (on) {
          await f.node.mine(1).catch(() => undefined);
          await new Promise((r) => setTimeout(r, ms));
        }
      })();
      return async () => {
        on = false;
        await loop;
      };
    },
    async booksMatchChain() {
      const store = f.td.daemon.store;
      const report = await store.snapshot((em) => verifyLedger(em));
      const rows = await store.read.find(LedgerBalanceEntity);
      const addresses = await store.read.find(AddressEntity, { where: { chain_id: chain.id } });
      const lines: string[] = [];
      let ok = report.ok;
      for (const ticker of ['ETH', 'USDT'] as const) {
        const coin = f.coin[ticker];
        const external = rows.find((r) => r.book === EXTERNAL_BOOK && r.coin_id === coin);
        const books = external ? Amount.of(external.debits_posted).minus(Amount.of(external.credits_posted)) : Amount.zero();
        const balances = await adapter.balances(addresses.map((a) => a.address), ticker === 'ETH' ? 'native' : f.usdt);
        const chainHolds = Amount.fromBaseUnits(balances.reduce((s, b) => s + b, 0n), decimals[ticker]);
        if (!books.eq(chainHolds)) ok = false;
        lines.push(`${ticker}: books ${books.toString()}, chain ${chainHolds.toString()}`);
      }
      return { ok, detail: `${lines.join('; ')}; verify ${JSON.stringify({ ok: report.ok, problems: report.problems.slice(0, 3), differences: report.differences.slice(0, 3) })}` };
    },
  };
}

export const eth = (s: string): bigint => parseEther(s);
