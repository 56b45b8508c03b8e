/**
 * What a payer can do on bcoin that its wallet will not: spend one coin twice. A key held by the
 * test is funded from bcoin's wallet and signs its own spends; a block holding any transactions the
 * test chooses (a double spend that never went through the mempool) is built, mined and submitted.
 */
import { Block, crypto, payments, Psbt, script, Transaction, type Network } from 'bitcoinjs-lib';
import { ECPairFactory } from 'ecpair';
import * as ecc from 'tiny-secp256k1';
import type { BcoinNode } from '../../src/dev/bcoin-node';

const ECPair = ECPairFactory(ecc);
/** Regtest's proof-of-work limit: about every other nonce meets it. */
const REGTEST_BITS = 0x207fffff;
const WITNESS_COMMITMENT_HEADER = Uint8Array.from([0xaa, 0x21, 0xa9, 0xed]);

export interface Coin {
  txid: string;
  vout: number;
  value: bigint;
}

export class KeyWallet {
  private readonly key = ECPair.makeRandom();
  readonly output: Uint8Array;
  readonly address: string;

  constructor(private readonly network: Network) {
    const p = payments.p2wpkh({ pubkey: this.key.publicKey, network });
    this.output = p.output!;
    this.address = p.address!;
  }

  /** Receives `value` from bcoin's wallet in a mined block; returns the coin. */
  async fund(node: BcoinNode, value: bigint): Promise<Coin> {
    const txid = await node.pay([{ address: this.address, value }]);
    await node.mine(1);
    const tx = Transaction.fromHex(await node.rpc<string>('getrawtransaction', [txid, false]));
    const vout = tx.outs.findIndex((o) => Buffer.from(o.script).equals(Buffer.from(this.output)));
    return { txid, vout, value };
  }

  /** A signed transaction spending `coin` to `outputs`; what is left is the fee. */
  spend(coin: Coin, outputs: Array<{ address: string; value: bigint }>): Transaction {
    const psbt = new Psbt({ network: this.network });
    psbt.addInput({ hash: coin.txid, index: coin.vout, witnessUtxo: { script: this.output, value: coin.value } });
    for (const o of outputs) psbt.addOutput(o);
    psbt.signInput(0, this.key);
    psbt.finalizeAllInputs();
    return psbt.extractTransaction();
  }
}

/** Mines one block on the node's tip holding `txs` (and a coinbase), and submits it; returns its hash. */
export async function mineBlockWith(node: BcoinNode, txs: Transaction[]): Promise<string> {
  const tipHash = await node.rpc<string>('getbestblockhash');
  const tip = await node.rpc<{ height: number; time: number }>('getblockheader', [tipHash, true]);
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
  const refused = await node.rpc<string | null>('submitblock', [block.toHex()]);
  if (refused) throw new Error(`submitblock: ${refused}`);
  return block.getId();
}
