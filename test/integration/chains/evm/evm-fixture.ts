/**
 * An EVM invoice test as a merchant sees it: a real anvil node with the test USDT, the real daemon
 * watching it (polling every 50 ms, 3 confirmations), a merchant with a signed API client.
 */
import { coinId } from '../../../../src/catalog/coins';
import type { AnvilNode } from '../../../../src/dev/anvil-node';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import type { Clock } from '../../../../src/shared/clock';
import { payFromAnvil, startAnvil } from '../../../helpers/anvil';
import { chainFixtureSide, waitWatched, type ChainFixtureSide } from '../../../helpers/chain-scan';
import { TcpGate } from '../../../helpers/tcp-gate';
import { EvmProvider, type ProviderRules } from '../../../helpers/evm-provider';
import { FIXED_RATES, startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { merchantSide, type MerchantSide } from '../../../helpers/merchant-side';

export const CONFIRMATIONS = 3;
export const FAST_WATCH = { poll_interval_ms: 50, stall_seconds: 0, rpc_timeout_ms: 5000 };
export const RATES = { sources: [{ kind: 'fixed', rates: { ...FIXED_RATES, USDT: { USD: '1', EUR: '0.93' } } }] };

export type Ticker = 'ETH' | 'USDT';

export interface EvmFixture extends Omit<MerchantSide, 'createInvoice' | 'transactions' | 'available'>, ChainFixtureSide<Ticker> {
  /** Replace it after a restart: payments and mining go to this node. */
  node: AnvilNode;
  /** With `gate`: the daemon reaches the node only through it. */
  gate: TcpGate | null;
  /** With `provider`: the daemon reaches the node through the provider emulator. */
  provider: EvmProvider | null;
  usdt: string;
  td: TestDaemon;
  coin: Record<Ticker, string>;
  /** A payment in a block of its own, 1 confirmation; returns the txid. */
  pay(to: string, ticker: Ticker, amount: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startEvmFixture(
  opts: {
    clock?: Clock;
    watch?: Record<string, unknown>;
    gate?: 'open' | 'closed';
    /** The provider emulator's rules (test/helpers/evm-provider.ts) between the daemon and anvil. */
    provider?: Partial<ProviderRules>;
    stateFile?: string;
    chain?: Record<string, unknown>;
    /** Endpoints of the chain (PRODUCT §15) given the node's own URL: the first is `rpc_url`, the rest `rpc_urls`. */
    endpoints?: (nodeUrl: string, gateUrl: string | null) => string[] | Promise<string[]>;
    overrides?: Record<string, unknown>;
  } = {},
): Promise<EvmFixture> {
  const { node, usdt } = await startAnvil({ stateFile: opts.stateFile });
  const gate = opts.gate ? new TcpGate(node.port) : null;
  await gate?.open();
  const provider = opts.provider ? await EvmProvider.start(node.rpcUrl, opts.provider) : null;
  const [first, ...more] = (await opts.endpoints?.(node.rpcUrl, gate?.url ?? null)) ?? [provider?.url ?? gate?.url ?? node.rpcUrl];
  const chain = anvilChainEntry(first!, usdt, {
    ...(more.length > 0 ? { rpc_urls: more } : {}),
    confirmations: CONFIRMATIONS,
    options: { ...FAST_WATCH, ...opts.watch },
    // The chain tests watch payments where they arrive: no sweep moves them on (and mines blocks
    // of its own); the payout tests sweep with their own fixture.
    sweep: { min: { ETH: '1000000', USDT: '1000000000' } },
    ...opts.chain,
  });
  if (opts.gate === 'closed') await gate!.close();
  const td = await startTestDaemon({ chains: [chain], rates: RATES, ...opts.overrides }, { clock: opts.clock });
  const side = await merchantSide(td, opts.clock);
  const coin = { ETH: coinId('ethereum', 'native'), USDT: coinId('ethereum', usdt) };
  const decimals = { ETH: 18, USDT: 6 };
  const fixture: EvmFixture = {
    ...side,
    ...chainFixtureSide(td, side, coin, () => fixture.node.blockNumber()),
    node,
    gate,
    provider,
    usdt,
    td,
    coin,
    pay: (to, ticker, amount) => payFromAnvil(fixture.node, ticker === 'ETH' ? 'native' : usdt, to, amount, decimals[ticker]),
    async stop() {
      await td.stop();
      await gate?.close();
      await provider?.stop();
      await fixture.node.kill();
    },
  };
  // Tests of a reachable node begin once the chain has its cursor.
  if (opts.gate !== 'closed') await waitWatched(td);
  return fixture;
}
