import { NATIVE_ASSET } from '../../catalog/coins';
import { Amount } from '../../shared/amount';
import type { ChainConfig } from '../../config/schema';
import type { ChainFamily } from '../family';
import { withdrawalReserve } from './fee-model';
import { evmScheme } from './derive';
import { HeadPush } from './head-push';
import { EvmAdapter } from './evm-adapter';
import { EvmRpc, RpcError } from './json-rpc';
import { evmProbe } from './doctor-probe';
import { poolOf, pooledTransport } from '../node-pool';

/** Ethereum and every EVM network (configuration of this one family). */
export const evmFamily: ChainFamily = {
  kind: 'evm',
  adapter: (chain, clock) => {
    const pool = poolOf(
      chain,
      clock,
      (e) => new EvmRpc(e.url, chain.watch.rpc_timeout_ms, limits(chain)),
      (rpc) => new EvmAdapter(chain, rpc),
      unavailable,
    );
    return new EvmAdapter(chain, pooledTransport(pool, ['call', 'batch', 'batchSettled', 'getLogs']), pool);
  },
  doctorEndpoint: (chain, e) => {
    const rpc = new EvmRpc(e.url, chain.watch.rpc_timeout_ms, limits(chain));
    const reader = new EvmAdapter(chain, rpc);
    return { url: e.url, reader, probe: evmProbe(chain, rpc, () => reader.feeQuote()) };
  },
  addressScheme: () => evmScheme(),
  // EIP-681: the native coin's value in wei; a token as an ERC-20 `transfer` call in base units.
  paymentUri: (coin, address, amount, evmChainId) => {
    const units = Amount.of(amount).toBaseUnits(coin.decimals).toString();
    const on = evmChainId === undefined ? '' : `@${evmChainId}`;
    if (coin.asset === NATIVE_ASSET) return `ethereum:${address}${on}?value=${units}`;
    return `ethereum:${coin.asset}${on}/transfer?address=${address}&uint256=${units}`;
  },
  // PRODUCT §8a: the payout's gas (a token's adds the treasury's top-up) at the current fee cap, by the chain's fee model.
  networkFeeReserve: (quote, token) => (quote.kind === 'evm' ? withdrawalReserve(quote, token) : null),
  holdings: { by: 'addresses', pastHeight: true },
  addresses: { treasuries: true, change: false, sharedAcrossChains: true },
  // `ws_url`: new heads pushed over WebSocket.
  headSource: (chain, log) => (chain.ws_url ? new HeadPush(chain.ws_url, log) : undefined),
};

/** A call the node did not answer (unreachable, timed out, an HTTP error, no JSON), not one it answered with an error. */
const unavailable = (err: unknown): boolean => err instanceof RpcError && !err.answered;

/** The chain's upper bounds of a batch and of an eth_getLogs range; each endpoint learns its own below them. */
const limits = (chain: ChainConfig) => ({ maxBatch: chain.nodes.max_batch, logsRange: chain.nodes.logs_range });
