/**
 * A block holding whatever transactions a test chooses (a double spend that never went through the
 * mempool, thousands of transactions at once), built, mined and submitted to bcoin.
 */
import { Block, crypto, script, Transaction } from 'bitcoinjs-lib';
import type { BcoinNode } from '../../src/dev/bcoin-node';

/** Regtest's proof-of-work limit: about every other nonce meets it. */
const REGTEST_BITS = 0x207fffff;
const WITNESS_COMMITMENT_HEADER = Uint8Array.from([0xaa, 0x21, 0xa9, 0xed]);

/** Mines one block on the node's tip holding `txs` (and a coinbase), and submits it; returns its hash. */
export async function mineBlockWith(node: BcoinNode, txs: Transaction[]): Promise<string> {
  const tipHash = await node.rpc.call<string>('getbestblockhash');
  const tip = await node.rpc.call<{ height: number; time: number }>('getblockheader', [tipHash, true]);
  const coinbase = new Transaction();
  coinbase.version = 2;
  coinbase.addInput(new Uint8Array(32), 0xffffffff, 0xffffffff, script.compile([script.number.encode(tip.height + 1), Buffer.from('coinkeep test')]));
  coinbase.ins[0]!.witness = [new Uint8Array(32)];
  const wtxids = [new Uint8Array(32), ...txs.map((tx) => tx.getHash(true))];
  const witnessRoot = Block.calculateMerkleRoot(wtxids.map((h) => ({ getHash: () => h })) as unknown as Transaction[]);
  const commitment = crypto.hash256(Buffer.concat([witnessRoot, new Uint8Array(32)]));
  coinbase.addOutput(script.compile([script.OPS.OP_RETURN!, Buffer.concat([WITNESS_COMMITMENT_HEADER, commitment])]), 0n);

  const block = new Block();
  block.version = 0x20000000;
  block.prevHash = Buffer.from(tipHash, 'hex').reverse();
  block.transactions = [coinbase, ...txs];
  block.merkleRoot = Block.calculateMerkleRoot(block.transactions);
  block.timestamp = Math.max(tip.time + 1, Math.floor(Date.now() / 1000));
  block.bits = REGTEST_BITS;
  block.nonce = 0;
  while (!block.checkProofOfWork()) block.nonce++;
  const refused = await node.rpc.call<string | null>('submitblock', [block.toHex()]);
  if (refused) throw new Error(`submitblock: ${refused}`);
  return block.getId();
}
