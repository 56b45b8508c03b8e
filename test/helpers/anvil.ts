/**
 * Anvil for the tests: the sandbox's own launcher (src/dev), with the test USDT deployed and the
 * payer funded. Every node started here is killed by `killAllAnvils` (an `after.always` hook), so
 * no anvil outlives its test file even when a test fails half-way.
 */
import { parseUnits } from 'ethers';
import { ANVIL_CHAIN_ID, AnvilNode, type AnvilOptions } from '../../src/dev/anvil-node';
import { payOnAnvil, prepareAnvil } from '../../src/dev/anvil';

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
