/**
 * Anvil for the tests: the sandbox's own launcher (src/dev), with the test USDT deployed and the
 * payer funded. Every node started here is killed by `killAllAnvils` (an `after.always` hook), so
 * no anvil outlives its test file even when a test fails half-way.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseUnits } from 'ethers';
import { PROJECT_ROOT } from '../../src/config/load';
import { ANVIL_CHAIN_ID, AnvilNode, type AnvilOptions } from '../../src/dev/anvil-node';
import { anvilProvider, payOnAnvil, prepareAnvil } from '../../src/dev/anvil';
import { ensureTestUsdt, TEST_USDT_DECIMALS } from '../../src/dev/test-usdt';

const running = new Set<AnvilNode>();

export interface TestAnvil {
  node: AnvilNode;
  /** The test USDT's contract (EIP-55). */
  usdt: string;
}

export async function startAnvil(options: AnvilOptions = {}): Promise<TestAnvil> {
  const node = await AnvilNode.start(options);
  running.add(node);
  return { node, usdt: await prepareAnvil(node) };
}

/** Starts a node again on the same port (and state file) after `stop`. */
export async function restartAnvil(node: AnvilNode): Promise<AnvilNode> {
  const again = await AnvilNode.start({ ...node.options, port: node.port });
  running.add(again);
  return again;
}

export async function killAllAnvils(): Promise<void> {
  await Promise.all([...running].map((n) => n.kill()));
  running.clear();
}

/**
 * Pays from the funded payer in a block of its own (anvil mines one per transaction) and mines
 * nothing more: the test decides the confirmations. `amount` is in coin units.
 */
export async function payFromAnvil(node: AnvilNode, asset: string, to: string, amount: string, decimals: number): Promise<string> {
  const { txid } = await payOnAnvil(node.rpcUrl, node.options.chainId ?? ANVIL_CHAIN_ID, 1, { asset, to, amount: parseUnits(amount, decimals) });
  return txid;
}

/** How QuirkyToken (src/dev/contracts) misbehaves: 0 not at all, 1 `transfer` returns false and moves nothing, 2 it takes 1% to its fee collector. */
export type Quirk = 0 | 1 | 2;

/** Puts QuirkyToken's code in place of the test USDT's at `usdt` (same storage: balances kept), misbehaving as `quirk` says. */
export async function makeQuirky(node: AnvilNode, usdt: string, quirk: Quirk): Promise<void> {
  const { deployedBytecode } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'dist', 'contracts', 'QuirkyToken.json'), 'utf8')) as {
    deployedBytecode: string;
  };
  await node.rpc('anvil_setCode', [usdt, deployedBytecode]);
  await node.rpc('anvil_setStorageAt', [usdt, `0x${'5'.padStart(64, '0')}`, `0x${quirk.toString(16).padStart(64, '0')}`]);
}

/**
 * Deploys another copy of the test token (a second configured token, e.g. "USDC") from anvil's
 * account `deployer` (its first transaction: a fresh contract address) and funds the payer with it.
 */
export async function deployTestToken(node: AnvilNode, deployer = 5): Promise<string> {
  const provider = anvilProvider(node.rpcUrl, node.options.chainId ?? ANVIL_CHAIN_ID);
  try {
    const accounts = await provider.listAccounts();
    return await ensureTestUsdt(accounts[deployer]!, accounts[1]!.address, parseUnits('1000000', TEST_USDT_DECIMALS));
  } finally {
    provider.destroy();
  }
}
