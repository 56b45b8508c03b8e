import path from 'node:path';
import { HDNodeWallet, JsonRpcProvider, Network, parseUnits } from 'ethers';
import type { ChainConfig } from '../config/schema';
import { ANVIL_CHAIN_ID, ANVIL_MNEMONIC, AnvilNode } from './anvil-node';
import type { SandboxChain, SandboxPayment } from './sandbox-chain';
import { ensureTestUsdt, TEST_USDT_DECIMALS, testUsdt } from './test-usdt';

/** Anvil's first funded account deploys the test USDT; the second pays (`coinkeep dev pay`). */
const DEPLOYER = 0;
const PAYER = 1;
const PAYER_USDT = parseUnits('1000000', TEST_USDT_DECIMALS);

export const anvilProvider = (rpcUrl: string, chainId = ANVIL_CHAIN_ID): JsonRpcProvider =>
  new JsonRpcProvider(rpcUrl, Network.from(chainId), { staticNetwork: true });

/** The sandbox's EVM chain entry: ETH and the test USDT, mined on demand so never "stalled". */
export function anvilChainEntry(rpcUrl: string, usdt: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'ethereum',
    kind: 'evm',
    chain_id: ANVIL_CHAIN_ID,
    rpc_url: rpcUrl,
    confirmations: 3,
    native: { ticker: 'ETH', decimals: 18 },
    tokens: [{ ticker: 'USDT', contract: usdt, decimals: TEST_USDT_DECIMALS }],
    options: { poll_interval_ms: 1000, stall_seconds: 0 },
    ...extra,
  };
}

/** Deploys the test USDT (once per chain) and funds the payer with it; returns its address. */
export async function prepareAnvil(node: AnvilNode): Promise<string> {
  const provider = anvilProvider(node.rpcUrl, node.options.chainId);
  try {
    const accounts = await provider.listAccounts();
    return await ensureTestUsdt(accounts[DEPLOYER]!, accounts[PAYER]!.address, PAYER_USDT);
  } finally {
    provider.destroy();
  }
}

/**
 * Sends `payment` from the funded payer account (anvil signs for its own accounts) and mines until
 * the transaction is `confirmations` deep.
 */
export async function payOnAnvil(rpcUrl: string, chainId: number, confirmations: number, payment: SandboxPayment): Promise<{ txid: string }> {
  const provider = anvilProvider(rpcUrl, chainId);
  try {
    const payer = (await provider.listAccounts())[PAYER]!;
    const tx =
      payment.asset === 'native'
        ? await payer.sendTransaction({ to: payment.to, value: payment.amount })
        : ((await testUsdt(payment.asset, payer).getFunction('transfer')(payment.to, payment.amount)) as { hash: string; wait(): Promise<unknown> });
    await tx.wait();
    if (confirmations > 1) await provider.send('anvil_mine', [`0x${(confirmations - 1).toString(16)}`]);
    return { txid: tx.hash };
  } finally {
    provider.destroy();
  }
}

/** What the sandbox gives a gas station below GAS_STATION_LOW: enough for thousands of sweeps and token payouts. */
const GAS_STATION_FUNDS = parseUnits('10', 18);
const GAS_STATION_LOW = parseUnits('1', 18);

/**
 * Funds an EVM chain's gas station (PRODUCT §8a) from the sandbox's payer when it holds less than
 * 1 ETH, so sweeps of test USDT and token payouts work at once. Whether it sent anything.
 */
export async function fundGasStation(chain: ChainConfig, gasStation: string): Promise<boolean> {
  const provider = anvilProvider(chain.rpc_url!, chain.chain_id);
  try {
    if ((await provider.getBalance(gasStation)) >= GAS_STATION_LOW) return false;
  } finally {
    provider.destroy();
  }
  await payOnAnvil(chain.rpc_url!, chain.chain_id!, 1, { asset: 'native', to: gasStation, amount: GAS_STATION_FUNDS });
  return true;
}

export const anvilSandbox: SandboxChain = {
  kind: 'evm',
  async start({ stateDir }) {
    const node = await AnvilNode.start({ stateFile: path.join(stateDir, 'anvil-state.json') });
    try {
      const usdt = await prepareAnvil(node);
      return { chains: [anvilChainEntry(node.rpcUrl, usdt)], stop: () => node.stop() };
    } catch (err) {
      await node.kill();
      throw err;
    }
  },
  fundGasStation,
  pay: (chain: ChainConfig, payment: SandboxPayment) => payOnAnvil(chain.rpc_url!, chain.chain_id!, chain.confirmations, payment),
  // The payer account (anvil's own, from its mnemonic): outside the daemon's wallet.
  payoutAddress: () => HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, `m/44'/60'/0'/0/${PAYER}`).address,
  async mine(chain: ChainConfig, blocks: number) {
    const provider = anvilProvider(chain.rpc_url!, chain.chain_id!);
    try {
      await provider.send('anvil_mine', [`0x${blocks.toString(16)}`]);
      return { height: await provider.getBlockNumber() };
    } finally {
      provider.destroy();
    }
  },
};
