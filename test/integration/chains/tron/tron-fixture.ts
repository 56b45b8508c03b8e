/**
 * A Tron invoice test as a merchant sees it: the Tron node stand-in with its TRC-20 USDT, the real
 * daemon watching it through the Tron adapter (polling every 50 ms, 3 confirmations), a merchant
 * with a signed API client. With `gate`, the daemon reaches the node only through a TCP gate.
 */
import { coinId } from '../../../../src/catalog/coins';
import type { Clock } from '../../../../src/shared/clock';
import { chainFixtureSide, waitWatched, type ChainFixtureSide } from '../../../helpers/chain-scan';
import { TcpGate } from '../../../helpers/tcp-gate';
import { FIXED_RATES, startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { merchantSide, type MerchantSide } from '../../../helpers/merchant-side';
import { TronNode } from '../../../helpers/tron-node';

export const CONFIRMATIONS = 3;
const FAST_WATCH = { poll_interval_ms: 50, stall_seconds: 0, rpc_timeout_ms: 5000 };
const RATES = { sources: [{ kind: 'fixed', rates: { ...FIXED_RATES, TRX: { USD: '0.25', EUR: '0.23' }, USDT: { USD: '1', EUR: '0.93' } } }] };
const DECIMALS = 6;

export type Ticker = 'TRX' | 'USDT';

export interface TronFixture extends Omit<MerchantSide, 'createInvoice' | 'transactions' | 'available'>, ChainFixtureSide<Ticker> {
  node: TronNode;
  gate: TcpGate | null;
  td: TestDaemon;
  coin: Record<Ticker, string>;
  /** A payment from the stand-in's payer, mined in a block of its own (1 confirmation); returns the txid. */
  pay(to: string, ticker: Ticker, amount: string, opts?: { revert?: boolean }): string;
  stop(): Promise<void>;
}

/** Coin units (decimal string) to base units of a 6-decimal coin. */
function baseUnits(amount: string): bigint {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 10n ** BigInt(DECIMALS) + BigInt(frac.padEnd(DECIMALS, '0'));
}

export async function startTronFixture(
  opts: { clock?: Clock; gate?: boolean; chain?: Record<string, unknown>; options?: Record<string, unknown>; overrides?: Record<string, unknown> } = {},
): Promise<TronFixture> {
  const node = await TronNode.start();
  const gate = opts.gate ? new TcpGate(node.port) : null;
  await gate?.open();
  const chain = {
    id: 'tron',
    kind: 'tron',
    full_node_url: gate?.url ?? node.url,
    confirmations: CONFIRMATIONS,
    tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: DECIMALS }],
    options: { ...FAST_WATCH, genesis_block_id: node.genesisId, ...opts.options },
    ...opts.chain,
  };
  const td = await startTestDaemon({ chains: [chain], rates: RATES, ...opts.overrides }, { clock: opts.clock });
  const side = await merchantSide(td, opts.clock);
  const coin = { TRX: coinId('tron', 'native'), USDT: coinId('tron', node.usdt) };
  const fixture: TronFixture = {
    ...side,
    ...chainFixtureSide(td, side, coin, () => node.height),
    node,
    gate,
    td,
    coin,
    pay(to, ticker, amount, payOpts) {
      const txid = node.pay(to, ticker === 'TRX' ? 'native' : node.usdt, baseUnits(amount), payOpts);
      node.mine();
      return txid;
    },
    async stop() {
      await td.stop();
      await gate?.close();
      await node.stop();
    },
  };
  await waitWatched(td);
  return fixture;
}
