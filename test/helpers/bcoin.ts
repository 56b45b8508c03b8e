/**
 * bcoin for the tests: the sandbox's own launcher (src/dev), a regtest node in memory with segwit
 * active and a funded wallet. Every node started here is killed by `killAllBcoins` (an
 * `after.always` hook), so no bcoin outlives its test file even when a test fails half-way.
 */
import { BcoinNode, type BcoinOptions } from '../../src/dev/bcoin-node';
import { Amount } from '../../src/shared/money';

const running = new Set<BcoinNode>();

export async function startBcoin(options: BcoinOptions = {}): Promise<BcoinNode> {
  const node = await BcoinNode.start(options);
  running.add(node);
  return node;
}

export async function killAllBcoins(): Promise<void> {
  await Promise.all([...running].map((n) => n.kill()));
  running.clear();
}

/** BTC (a decimal string) in satoshi. */
export const sats = (btc: string): bigint => Amount.of(btc).toBaseUnits(8);
