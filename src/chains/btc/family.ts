import type { ChainFamily } from '../family';
import { TWO_INPUT_PAYMENT_VSIZE } from './tx-size';
import { BtcAdapter } from './btc-adapter';
import { BitcoinRpc, BitcoinRpcError } from './rpc';
import { btcProbe } from './doctor-probe';
import { poolOf, pooledTransport } from '../node-pool';
import { btcScheme } from './derive';
import { BlockWait } from './block-wait';

/** Bitcoin and its test networks: P2WPKH addresses, BIP21 payment URIs, coins and change. */
export const btcFamily: ChainFamily = {
  kind: 'btc',
  adapter: (chain, clock) => {
    const pool = poolOf(
      chain,
      clock,
      (e) => new BitcoinRpc(e.url, chain.watch.rpc_timeout_ms),
      (rpc) => new BtcAdapter(chain, rpc),
      unavailable,
    );
    return new BtcAdapter(chain, pooledTransport(pool, ['call', 'all', 'batch']), pool);
  },
  doctorEndpoint: (chain, e) => {
    const rpc = new BitcoinRpc(e.url, chain.watch.rpc_timeout_ms);
    return { url: e.url, reader: new BtcAdapter(chain, rpc), probe: btcProbe(rpc) };
  },
  addressScheme: (chain) => btcScheme(chain),
  paymentUri: (_coin, address, amount) => `bitcoin:${address}?amount=${amount}`,
  // Without the rail's own pricing (payouts off), a payment of two inputs at the quoted rate.
  networkFeeReserve: (quote) => (quote.kind === 'btc' ? BigInt(Math.ceil(quote.satPerVbyte * TWO_INPUT_PAYMENT_VSIZE)) : null),
  holdings: { by: 'outputs', pastHeight: false },
  addresses: { treasuries: false, change: true },
  // Core's long poll on the first endpoint (bcoin answers method not found: polled only).
  headSource: (chain, log) =>
    chain.watch.wait_for_blocks === false ? undefined : new BlockWait(chain.nodes.endpoints[0]!.url, chain.watch.rpc_timeout_ms, log),
};

/** A call the node did not answer (no JSON-RPC error code), not one it answered with an error. */
const unavailable = (err: unknown): boolean => err instanceof BitcoinRpcError && err.rpcCode === null;
