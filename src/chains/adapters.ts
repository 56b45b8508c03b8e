import type { ChainConfig, NodeEndpoint } from '../config/schema';
import { systemClock, type Clock } from '../shared/clock';
import type { AdapterFactory } from './chain-core';
import { NodePool, pooledTransport, type PoolMember } from './node-pool';
import type { ChainAdapter, ChainNodeSet } from './types';
import { BtcAdapter } from './btc/btc-adapter';
import { BitcoinRpc, BitcoinRpcError } from './btc/rpc';
import { EvmAdapter } from './evm/evm-adapter';
import { EvmRpc, RpcError } from './evm/json-rpc';
import { TronAdapter } from './tron/tron-adapter';
import { TronFullNode } from './tron/full-node';
import type { DoctorEndpoint } from './doctor';
import { btcProbe } from './btc/doctor-probe';
import { evmProbe } from './evm/doctor-probe';
import { liteNote, tronProbe } from './tron/doctor-probe';

/**
 * The adapter of each chain family: the only switch on `kind` outside the config. Every chain's
 * adapter reads and sends through a pool of its endpoints (PRODUCT §15), and hands the pool to
 * the chain core as its `nodes`.
 */
export const adapterFor: AdapterFactory = (chain: ChainConfig, clock: Clock = systemClock): ChainAdapter | null => {
  const timeout = chain.watch.rpc_timeout_ms;
  switch (chain.kind) {
    case 'evm': {
      const pool = poolOf(chain, clock, (e) => new EvmRpc(e.url, timeout), (rpc) => new EvmAdapter(chain, rpc), evmUnavailable);
      return new EvmAdapter(chain, pooledTransport(pool, ['call', 'batch', 'batchSettled']), pool);
    }
    case 'btc': {
      const pool = poolOf(chain, clock, (e) => new BitcoinRpc(e.url, timeout), (rpc) => new BtcAdapter(chain, rpc), btcUnavailable);
      return new BtcAdapter(chain, pooledTransport(pool, ['call', 'all', 'batch']), pool);
    }
    case 'tron': {
      const pool = poolOf(chain, clock, (e) => new TronFullNode(e.url, timeout, e.api_key ?? chain.api_key), (node) => new TronAdapter(chain, node), tronUnavailable);
      return new TronAdapter(chain, pooledTransport(pool, ['post']), pool);
    }
  }
};

/** Each endpoint of a chain on its own, with its family's checks: what `coinkeep doctor` asks of every one in turn. */
export function doctorEndpoints(chain: ChainConfig): DoctorEndpoint[] {
  const timeout = chain.watch.rpc_timeout_ms;
  return chain.nodes.endpoints.map((e): DoctorEndpoint => {
    switch (chain.kind) {
      case 'evm': {
        const rpc = new EvmRpc(e.url, timeout);
        return { url: e.url, reader: new EvmAdapter(chain, rpc), probe: evmProbe(chain, rpc) };
      }
      case 'btc': {
        const rpc = new BitcoinRpc(e.url, timeout);
        return { url: e.url, reader: new BtcAdapter(chain, rpc), probe: btcProbe(rpc) };
      }
      case 'tron': {
        const node = new TronFullNode(e.url, timeout, e.api_key ?? chain.api_key);
        return { url: e.url, reader: new TronAdapter(chain, node), probe: tronProbe(node), explain: liteNote };
      }
    }
  });
}

function poolOf<T>(chain: ChainConfig, clock: Clock, transport: (e: NodeEndpoint) => T, reader: (t: T) => ChainAdapter, unavailable: (err: unknown) => boolean): NodePool<T> & ChainNodeSet {
  const members = chain.nodes.endpoints.map((e): PoolMember<T> => {
    const t = transport(e);
    return { transport: t, reader: reader(t), requestsPerDay: e.requests_per_day };
  });
  return new NodePool(members, { quorum: chain.nodes.quorum, staleAfterSeconds: chain.nodes.stale_after_seconds, clock, unavailable });
}

/** A call the node did not answer (unreachable, timed out, an HTTP error, no JSON), not one it answered with an error. */
const evmUnavailable = (err: unknown): boolean => err instanceof RpcError && !err.answered;
const btcUnavailable = (err: unknown): boolean => err instanceof BitcoinRpcError && err.rpcCode === null;
const tronUnavailable = (err: unknown): boolean => err instanceof Error && /^tron node \w+: (timed out|unreachable|HTTP \d+|the answer is not JSON)/.test(err.message);
