import { createHash } from 'node:crypto';
import { payments, Psbt, Transaction, type Network } from 'bitcoinjs-lib';
import { ECPairFactory } from 'ecpair';
import * as ecc from 'tiny-secp256k1';
import type { BitcoinRpc } from '../chains/btc/rpc';

const ECPair = ECPairFactory(ecc);

/** Coinbase outputs spend 100 blocks after their own. */
const COINBASE_MATURITY = 100;
/** Above bcoin's relay minimum of 1 sat/vB. */
const FEE_SAT_PER_VBYTE = 2n;
/** Virtual size of a P2WPKH spend: overhead, each input, each output (rounded up). */
const TX_VBYTES = 11n;
const INPUT_VBYTES = 68n;
const OUTPUT_VBYTES = 31n;
const MEMPOOL_WAIT_MS = 10_000;
/** Blocks read per round while looking for unspent rewards. */
const SCAN_CHUNK = 100;
/** Change below this is left to the miner rather than made into an output nobody would spend. */
const DUST = 546n;

export interface RegtestCoin {
  txid: string;
  vout: number;
  value: bigint;
}

export interface RegtestOutput {
  address: string;
  value: bigint;
}

/**
 * The sandbox's payer on a regtest node: one fixed, publicly known key (never for real funds). The
 * node mines its block rewards to it, and it signs its own P2WPKH spends, so paying needs no node
 * wallet: bcoin's wallet cannot list its coins on the leveldown the project pins, and Bitcoin Core
 * needs none either. Coins are the mature coinbase outputs it has not spent, in the chain or in
 * the mempool.
 */
export class RegtestPayer {
  private readonly key = ECPair.fromPrivateKey(createHash('sha256').update('coinkeep regtest sandbox payer').digest());
  readonly output: Uint8Array;
  readonly address: string;
  /** Rewards are spent oldest first: the blocks below the last coin found need no second look. */
  private scanFrom = 1;

  constructor(private readonly network: Network) {
    const p = payments.p2wpkh({ pubkey: this.key.publicKey, network });
    this.output = p.output!;
    this.address = p.address!;
  }

  /** Mature unspent coinbase outputs of this payer worth at least `needed`, oldest first. */
  async coins(rpc: BitcoinRpc, needed: bigint, signal?: AbortSignal): Promise<RegtestCoin[]> {
    const matureTop = (await rpc.call<number>('getblockcount', [], signal)) - COINBASE_MATURITY + 1;
    const spentInMempool = await this.mempoolSpends(rpc, signal);
    const mine = Buffer.from(this.output).toString('hex');
    const picked: RegtestCoin[] = [];
    let total = 0n;
    for (let from = this.scanFrom; from <= matureTop; from += SCAN_CHUNK) {
      const heights = Array.from({ length: Math.min(SCAN_CHUNK, matureTop - from + 1) }, (_, i) => from + i);
      const hashes = await rpc.all<string>(
        heights.map((h) => ({ method: 'getblockhash', params: [h] })),
        signal,
      );
      const blocks = await rpc.all<{ tx: string[] }>(
        hashes.map((hash) => ({ method: 'getblock', params: [hash, true] })),
        signal,
      );
      const candidates = blocks.map((b, i) => ({ txid: b.tx[0]!, height: heights[i]! })).filter((c) => !spentInMempool.has(`${c.txid}:0`));
      // Chain coins only: one spent by a mempool transaction is already left out.
      const outs = await rpc.all<{ value: number; scriptPubKey: { hex: string } } | null>(
        candidates.map((c) => ({ method: 'gettxout', params: [c.txid, 0, false] })),
        signal,
      );
      for (const [i, out] of outs.entries()) {
        if (!out || out.scriptPubKey.hex !== mine) continue;
        const value = BigInt(Math.round(out.value * 1e8));
        if (picked.length === 0) this.scanFrom = candidates[i]!.height;
        picked.push({ txid: candidates[i]!.txid, vout: 0, value });
        total += value;
        if (total >= needed) return picked;
      }
    }
    throw new Error(`the sandbox payer has ${total} sat in mature coins, ${needed} needed: mine more blocks`);
  }

  /** A signed transaction spending `coins` to `outputs`, the change (if any) back to the payer. */
  sign(coins: RegtestCoin[], outputs: RegtestOutput[]): Transaction {
    const fee = FEE_SAT_PER_VBYTE * (TX_VBYTES + INPUT_VBYTES * BigInt(coins.length) + OUTPUT_VBYTES * BigInt(outputs.length + 1));
    const change = coins.reduce((a, c) => a + c.value, 0n) - outputs.reduce((a, o) => a + o.value, 0n) - fee;
    if (change < 0n) throw new Error('the coins do not cover the outputs and the fee');
    const psbt = new Psbt({ network: this.network });
    for (const c of coins) psbt.addInput({ hash: c.txid, index: c.vout, witnessUtxo: { script: this.output, value: c.value } });
    for (const o of outputs) psbt.addOutput(o);
    if (change >= DUST) psbt.addOutput({ address: this.address, value: change });
    psbt.signAllInputs(this.key);
    psbt.finalizeAllInputs();
    return psbt.extractTransaction();
  }

  /**
   * Pays `outputs` in one transaction and returns its txid once it is in the node's mempool: bcoin
   * answers sendrawtransaction before its mempool has it, and a block mined in between would not.
   */
  async pay(rpc: BitcoinRpc, outputs: RegtestOutput[], signal?: AbortSignal): Promise<string> {
    const total = outputs.reduce((a, o) => a + o.value, 0n);
    const coins = await this.coins(rpc, total + 10_000n, signal);
    const txid = await rpc.call<string>('sendrawtransaction', [this.sign(coins, outputs).toHex()], signal);
    const deadline = Date.now() + MEMPOOL_WAIT_MS;
    while (!(await rpc.call<string[]>('getrawmempool', [false], signal)).includes(txid)) {
      if (Date.now() > deadline) throw new Error(`transaction ${txid} did not reach the mempool within ${MEMPOOL_WAIT_MS} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return txid;
  }

  /** Mines `blocks` blocks, their rewards to this payer; returns their hashes. */
  mine(rpc: BitcoinRpc, blocks: number, signal?: AbortSignal): Promise<string[]> {
    return rpc.call<string[]>('generatetoaddress', [blocks, this.address], signal);
  }

  private async mempoolSpends(rpc: BitcoinRpc, signal?: AbortSignal): Promise<Set<string>> {
    const txids = await rpc.call<string[]>('getrawmempool', [false], signal);
    const raws = await rpc.all<string>(
      txids.map((txid) => ({ method: 'getrawtransaction', params: [txid, false] })),
      signal,
    );
    const spent = new Set<string>();
    for (const raw of raws) for (const input of Transaction.fromHex(raw).ins) spent.add(`${Buffer.from(input.hash).reverse().toString('hex')}:${input.index}`);
    return spent;
  }
}
