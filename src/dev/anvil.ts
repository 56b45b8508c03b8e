import path from 'node:path';
import { HDNodeWallet, JsonRpcProvider, Network, parseUnits } from 'ethers';
import type { ChainConfig } from '../config/schema';
import { ANVIL_CHAIN_ID, ANVIL_MNEMONIC, AnvilNode } from './anvil-node';
import type { SandboxChain, SandboxPayment } from './sandbox-chain';
import { ensureTestToken, ensureTestUsdt, TEST_TOKEN_DECIMALS, TEST_USDT_DECIMALS, testUsdt, type TestToken } from './test-usdt';

/** Anvil's first funded account deploys the test USDT; the second pays (`coinkeep dev pay`). */
const DEPLOYER = 0;
const PAYER = 1;
const PAYER_USDT = parseUnits('1000000', TEST_USDT_DECIMALS);

/**
 * The EVM chains of `coinkeep dev`, one anvil each, so that a merchant can pay on the wrong one: an
 * EVM address is the same on both. `ethereum` is anvil's own chain id; `base` a local id next to it
 * (not Base Sepolia's 84532: a sandbox transaction can never be replayed on a public chain, and a
 * real wallet reading the payment page's EIP-681 link does not send on one). Each has its own
 * deployer, so its USDT and USDC sit at other addresses than the other chain's, as on real chains.
 */
export interface SandboxEvmChain {
  id: string;
  chainId: number;
  deployer: number;
  /** Under the sandbox's state dir. */
  stateFile: string;
}

export const SANDBOX_EVM_CHAINS: readonly SandboxEvmChain[] = [
  { id: 'ethereum', chainId: ANVIL_CHAIN_ID, deployer: DEPLOYER, stateFile: 'anvil-state.json' },
  { id: 'base', chainId: 31338, deployer: 2, stateFile: 'anvil-base-state.json' },
];

const SANDBOX_TOKENS: readonly TestToken[] = ['USDT', 'USDC'];
const TOKEN_NAMES: Record<TestToken, string> = { USDT: 'Tether USD', USDC: 'USD Coin' };

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

/** Deploys the sandbox's test tokens on a chain of `coinkeep dev` (once per chain), the payer funded with each; their addresses. */
export async function prepareSandboxAnvil(node: AnvilNode, deployer: number): Promise<Record<TestToken, string>> {
  const provider = anvilProvider(node.rpcUrl, node.options.chainId);
  try {
    const accounts = await provider.listAccounts();
    const out = {} as Record<TestToken, string>;
    for (const token of SANDBOX_TOKENS)
      out[token] = await ensureTestToken(token, accounts[deployer]!, accounts[PAYER]!.address, parseUnits('1000000', TEST_TOKEN_DECIMALS[token]));
    return out;
  } finally {
    provider.destroy();
  }
}

/** Starts the anvil of one sandbox EVM chain (its chain kept under `stateDir`) with its tokens; its chain entry. */
async function startSandboxAnvil(spec: SandboxEvmChain, stateDir: string): Promise<{ node: AnvilNode; entry: Record<string, unknown> }> {
  const node = await AnvilNode.start({ chainId: spec.chainId, stateFile: path.join(stateDir, spec.stateFile) });
  try {
    const tokens = await prepareSandboxAnvil(node, spec.deployer);
    const entry = anvilChainEntry(node.rpcUrl, tokens.USDT, {
      id: spec.id,
      chain_id: spec.chainId,
      tokens: SANDBOX_TOKENS.map((t) => ({ ticker: t, name: TOKEN_NAMES[t], contract: tokens[t], decimals: TEST_TOKEN_DECIMALS[t] })),
    });
    return { node, entry };
  } catch (err) {
    await node.kill();
    throw err;
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
    // Both anvils at once: the sandbox's start waits for the slowest node, not their sum.
    const started = await Promise.allSettled(SANDBOX_EVM_CHAINS.map((spec) => startSandboxAnvil(spec, stateDir)));
    const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value.node] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(nodes.map((n) => n.stop()));
      throw failed.reason;
    }
    return {
      chains: started.map((r) => (r as PromiseFulfilledResult<{ entry: Record<string, unknown> }>).value.entry),
      stop: async () => void (await Promise.all(nodes.map((n) => n.stop()))),
    };
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
