import path from 'node:path';
import type { ChainConfig } from '../config/schema';
import { BitcoinRpc } from '../chains/btc/rpc';
import { BCOIN_REGTEST_OPTIONS, bcoinPayer, BcoinNode } from './bcoin-node';
import type { SandboxChain, SandboxPayment } from './sandbox-chain';

/** The sandbox's Bitcoin chain entry: bcoin's regtest address parameters, mined on demand so never "stalled". */
export function bcoinChainEntry(rpcUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { options, ...rest } = extra;
  return {
    id: 'bitcoin',
    kind: 'btc',
    network: 'regtest',
    rpc_url: rpcUrl,
    confirmations: 2,
    native: { ticker: 'BTC', decimals: 8 },
    options: { ...BCOIN_REGTEST_OPTIONS, poll_interval_ms: 1000, stall_seconds: 0, ...(options as Record<string, unknown> | undefined) },
    ...rest,
  };
}

/** Pays from the sandbox payer, then mines until the payment has the chain's confirmations. */
export async function payOnBcoin(chain: ChainConfig, payment: SandboxPayment): Promise<{ txid: string }> {
  if (payment.asset !== 'native') throw new Error(`bitcoin pays only BTC, not ${payment.asset}`);
  const rpc = new BitcoinRpc(chain.rpc_url!, chain.watch.rpc_timeout_ms);
  const payer = bcoinPayer();
  const txid = await payer.pay(rpc, [{ address: payment.to, value: payment.amount }]);
  await payer.mine(rpc, Math.max(chain.confirmations, 1));
  return { txid };
}

export const bcoinSandbox: SandboxChain = {
  kind: 'btc',
  async start({ stateDir }) {
    const node = await BcoinNode.start({ dataDir: path.join(stateDir, 'bcoin') });
    return { chains: [bcoinChainEntry(node.rpcUrl)], stop: () => node.stop() };
  },
  pay: payOnBcoin,
  async mine(chain, blocks) {
    const rpc = new BitcoinRpc(chain.rpc_url!, chain.watch.rpc_timeout_ms);
    await bcoinPayer().mine(rpc, blocks);
    return { height: await rpc.call<number>('getblockcount') };
  },
  payoutAddress: () => bcoinPayer().address,
};
