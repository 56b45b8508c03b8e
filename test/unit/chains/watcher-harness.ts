import type { ExecutionContext } from 'ava';
import { Catalog, coinId } from '../../../src/catalog/coins';
import { ChainWatcher } from '../../../src/chains/chain-watcher';
import { TransferRecorder } from '../../../src/chains/transfer-recorder';
import { TransferRouter } from '../../../src/chains/transfer-router';
import type { NormalisedTransfer } from '../../../src/chains/types';
import { WalletCoins } from '../../../src/chains/wallet-coins';
import { WatchedAddresses } from '../../../src/chains/watched-addresses';
import { parseConfig } from '../../../src/config/schema';
import { AddressEntity, ChainTransferEntity } from '../../../src/db/entities/chain';
import { Store } from '../../../src/db/store';
import { FakeClock } from '../../../src/shared/clock';
import { createLogger } from '../../../src/shared/logger';
import { FakeChain, RecordingSink } from './fake-chain';

export const USDT = '0xTokenUSDT';
export const ALICE = '0xA11CE';
export const BOB = '0xB0B';
export const STRANGER = '0x5742';

export const eth = (to: string, wei: bigint, txid: string): NormalisedTransfer => ({ asset: 'native', to, amount: wei, txid, index: 0 });
export const usdt = (to: string, units: bigint, txid: string, index = 0): NormalisedTransfer => ({ asset: USDT, to, amount: units, txid, index });

/**
 * One chain core over a fake node and an in-memory database, with ALICE and BOB watched: what the
 * chain core's unit tests drive. `node` replaces the plain fake node (a family with a mempool); `url`
 * the database (integration tests on PostgreSQL).
 */
export async function setup<N extends FakeChain = FakeChain>(
  t: ExecutionContext,
  opts: { confirmations?: number; options?: Record<string, unknown>; chain?: Record<string, unknown>; node?: N; url?: string } = {},
) {
  const store = await Store.open({ url: opts.url ?? 'sqlite::memory:' });
  await store.migrate();
  t.teardown(() => store.close());
  const config = parseConfig({
    chains: [
      {
        id: 'ethereum',
        kind: 'evm',
        chain_id: 31337,
        rpc_url: 'http://127.0.0.1:1',
        confirmations: opts.confirmations ?? 3,
        tokens: [{ ticker: 'USDT', contract: USDT, decimals: 6 }],
        options: { start_height: 1, stall_seconds: 0, ...opts.options },
        ...opts.chain,
      },
    ],
  });
  const chain = config.chains[0]!;
  const catalog = new Catalog(config.chains, config.fiat);
  const clock = new FakeClock();
  const sink = new RecordingSink(store, clock);
  // The addresses are ETH invoices': a token paid to them is a stray (PRODUCT §17), recorded the
  // same; the sink hears both, these tests being about the core's recording, not the purpose.
  const router = new TransferRouter().register('invoice', 'incoming', sink).register('stray', 'incoming', sink);
  const watched = new WatchedAddresses();
  const coins = new WalletCoins(watched);
  const node = opts.node ?? (new FakeChain() as N);
  const logs: Array<{ level: string; msg: string }> = [];
  const logger = createLogger({ level: 'debug', write: (l) => logs.push(JSON.parse(l) as { level: string; msg: string }) });
  for (const [i, address] of [ALICE, BOB].entries()) {
    const id = `00000000-0000-4000-8000-00000000000${i}`;
    await store.write((em) =>
      em.insert(AddressEntity, {
        id,
        account_id: 'acc',
        chain_id: 'ethereum',
        coin_id: coinId('ethereum', 'native'),
        address,
        derivation_path: `m/44'/60'/0'/0/${i}`,
        derivation_index: i,
        purpose: 'invoice',
        invoice_id: null,
        status: 'active',
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
      }),
    );
    watched.add('ethereum', address, id);
  }
  /**
   * A fresh watcher on the same database: what a restarted daemon builds (with `coins` loaded
   * afresh, as it does; `on`: another daemon's handle on the database).
   */
  const restart = (walletCoins = coins, on: Store = store) =>
    new ChainWatcher({
      chain,
      adapter: node,
      store: on,
      recorder: new TransferRecorder(router, walletCoins, clock),
      watched,
      coins: walletCoins,
      catalog,
      clock,
      logger,
    });
  const watcher = restart();
  const signal = new AbortController().signal;
  const coinsInMaintenance = () =>
    catalog
      .coins()
      .filter((c) => catalog.inMaintenance(c.id))
      .map((c) => c.ticker);
  const transfers = () => store.read.find(ChainTransferEntity, { order: { block_height: 'ASC', txid: 'ASC' } });
  return { store, node, sink, router, watcher, restart, signal, clock, catalog, watched, coinsInMaintenance, transfers, logs };
}
