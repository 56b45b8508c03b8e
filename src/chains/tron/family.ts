import type { ChainFamily } from '../family';
import { tronScheme } from './derive';
import { TronAdapter, type NewestBlock } from './tron-adapter';
import { TronFullNode } from './full-node';
import { liteNote, tronProbe } from './doctor-probe';
import { poolOf, pooledTransport } from '../node-pool';

/** Tron: accounts like EVM, its own address form, fees priced by its payout rail only. */
export const tronFamily: ChainFamily = {
  kind: 'tron',
  adapter: (chain, clock) => {
    // The tip the pool reads through an endpoint's adapter brings the newest block whole: the chain's reads take it from there.
    const newest: NewestBlock = { block: null };
    const pool = poolOf(
      chain,
      clock,
      (e) => new TronFullNode(e.url, chain.watch.rpc_timeout_ms, e.api_key ?? chain.api_key),
      (node) => new TronAdapter(chain, node, undefined, newest),
    );
    return new TronAdapter(chain, pooledTransport(pool, ['post']), pool, newest);
  },
  doctorEndpoint: (chain, e) => {
    const node = new TronFullNode(e.url, chain.watch.rpc_timeout_ms, e.api_key ?? chain.api_key);
    return { url: e.url, reader: new TronAdapter(chain, node), probe: tronProbe(node), explain: liteNote };
  },
  addressScheme: () => tronScheme(),
  // Tron wallets agree on no URI scheme: a plain address.
  paymentUri: (_coin, address) => address,
  networkFeeReserve: () => null,
  holdings: { by: 'addresses', pastHeight: false },
  addresses: { treasuries: true, change: false },
};
