/**
 * bcoin for the tests: the sandbox's own launcher (src/dev), a regtest node with segwit
 * active and a funded wallet, started from a copy of a chain prepared once (preparedChain). Every node started here is killed by `killAllBcoins` (an
 * `after.always` hook), so no bcoin outlives its test file even when a test fails half-way.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Block, Transaction } from 'bitcoinjs-lib';
import { BcoinNode, type BcoinOptions } from '../../src/dev/bcoin-node';
import { Amount } from '../../src/shared/amount';

const running = new Set<BcoinNode>();

/** A node in memory unless `dataDir` is given; it starts from a copy of the prepared chain. */
export async function startBcoin(options: BcoinOptions = {}): Promise<BcoinNode> {
  const node = await BcoinNode.start(options.dataDir ? options : { ...options, copyOf: await preparedChain() });
  running.add(node);
  return node;
}

const READY = 'prepared';

/**
 * A regtest chain as BcoinNode.start prepares it (segwit active, the payer's rewards mature: 432
 * blocks, about 0.85 s of the node's CPU and a second of wall time per start), mined once per
 * machine and bcoin version and copied for every test node. Built in a directory of its own and
 * renamed into place whole, so test files starting at once never see half of one (the first
 * rename wins; the others drop theirs).
 */
function preparedChain(): Promise<string> {
  prepared ??= prepareChain();
  return prepared;
}
let prepared: Promise<string> | undefined;

async function prepareChain(): Promise<string> {
  const version = (JSON.parse(readFileSync(require.resolve('bcoin/package.json'), 'utf8')) as { version: string }).version;
  const dir = path.join(os.tmpdir(), `coinkeep-bcoin-regtest-${version}-segwit`);
  if (existsSync(path.join(dir, READY))) return dir;
  const work = mkdtempSync(`${dir}-wip-`);
  const node = await BcoinNode.start({ dataDir: work });
  await node.stop();
  writeFileSync(path.join(work, READY), '');
  try {
    renameSync(work, dir);
  } catch {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
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
