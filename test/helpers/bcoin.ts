/**
 * bcoin for the tests: the sandbox's own launcher (src/dev), a regtest node in memory with segwit
 * active and a funded wallet. Every node started here is killed by `killAllBcoins` (an
 * `after.always` hook), so no bcoin outlives its test file even when a test fails half-way.
 */
import { Block, Transaction } from 'bitcoinjs-lib';
import { BcoinNode, type BcoinOptions } from '../../src/dev/bcoin-node';
import { Amount } from '../../src/shared/amount';

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

/**
 * The transaction `txid`, from the node's mempool or from one of its newest `depth` blocks: the
 * test nodes keep no transaction index (Bitcoin Core's default), so a mined one is read from its block.
 */
export async function findTransaction(node: BcoinNode, txid: string, depth = 200): Promise<Transaction> {
  const pooled = await node.rpc.batch([{ method: 'getrawtransaction', params: [txid, false] }]);
  if (pooled[0]!.ok) return Transaction.fromHex(pooled[0]!.result as string);
  const tip = await node.height();
  for (let h = tip; h > tip - depth && h >= 0; h--) {
    const hash = await node.rpc.call<string>('getblockhash', [h]);
    const block = Block.fromHex(await node.rpc.call<string>('getblock', [hash, false]));
    const tx = block.transactions?.find((x) => x.getId() === txid);
    if (tx) return tx;
  }
  throw new Error(`transaction ${txid} is neither in the mempool nor in the newest ${depth} blocks`);
}
