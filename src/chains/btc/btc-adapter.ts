import type { Network } from 'bitcoinjs-lib';
import type { BtcFeeOptions, ChainConfig } from '../../config/schema';
import type { BlockHeader, BlockRef, ChainAdapter, NormalisedBlock, NormalisedTransfer } from '../types';
import { btcNetwork } from './derive';
import { outputScript, parseBlock, parseTransaction } from './parse';
import { BitcoinRpc } from './rpc';

/** Raw transactions asked for per request while reading the mempool: bounded answers on a busy node. */
const MEMPOOL_BATCH = 250;

/** Where the fee rate came from: the node's estimate, or the configured fallback when it has none (regtest, a fresh node). */
export interface FeeRate {
  satPerVbyte: number;
  source: 'node' | 'fallback';
}

/**
 * A Bitcoin node (Bitcoin Core or bcoin) as the chain core sees it, over the JSON-RPC both share.
 * Blocks and transactions are read raw and parsed here with bitcoinjs-lib, so the two nodes take the
 * same code path: `getblock HASH 0` (Core's verbosity 0, bcoin's verbose false) and
 * `getrawtransaction TXID false`. bcoin needs `--index-tx` only for transactions outside its mempool,
 * which this adapter never asks for.
 */
export class BtcAdapter implements ChainAdapter {
  readonly chainId: string;
  private readonly network: Network;
  private readonly fees: BtcFeeOptions;
  /** The mempool's transactions already parsed, by txid: each poll fetches only the new ones. */
  private readonly pooled = new Map<string, NormalisedTransfer[]>();

  constructor(chain: ChainConfig, private readonly rpc = new BitcoinRpc(chain.rpc_url!, chain.watch.rpc_timeout_ms)) {
    this.chainId = chain.id;
    this.network = btcNetwork(chain);
    this.fees = chain.fees!;
  }

  /** The best block's hash, then its height: a pair that holds even if the chain moves in between. */
  async tip(signal?: AbortSignal): Promise<BlockRef> {
    const hash = await this.rpc.call<string>('getbestblockhash', [], signal);
    const { height } = await this.rpc.call<{ height: number }>('getblockheader', [hash, true], signal);
    return { height, hash };
  }

  async header(height: number, signal?: AbortSignal): Promise<BlockHeader> {
    const hash = await this.rpc.call<string>('getblockhash', [height], signal);
    const header = await this.rpc.call<{ previousblockhash?: string }>('getblockheader', [hash, true], signal);
    // Only the genesis block has no parent.
    return { height, hash, parentHash: header.previousblockhash ?? '0'.repeat(64) };
  }

  async blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]> {
    const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const hashes = await this.rpc.all<string>(heights.map((h) => ({ method: 'getblockhash', params: [h] })), signal);
    const raws = await this.rpc.all<string>(hashes.map((hash) => ({ method: 'getblock', params: [hash, 0] })), signal);
    return raws.map((hex, i) => {
      const block = parseBlock(hex, heights[i]!, this.network);
      if (block.hash !== hashes[i]) throw new Error(`bitcoin node getblock: asked for ${hashes[i]}, got ${block.hash}`);
      return block;
    });
  }

  /** An address's output script: the watch key its transfers carry, so only watched outputs are encoded as text. */
  watchKey(address: string): Uint8Array | null {
    return outputScript(address, this.network);
  }

  /**
   * The transfers of every transaction in the node's mempool. A transaction that left the mempool
   * between the list and its fetch is skipped: it is in a block, or gone.
   */
  async mempool(signal?: AbortSignal): Promise<NormalisedTransfer[]> {
    const txids = new Set(await this.rpc.call<string[]>('getrawmempool', [false], signal));
    for (const txid of this.pooled.keys()) if (!txids.has(txid)) this.pooled.delete(txid);
    const fresh = [...txids].filter((txid) => !this.pooled.has(txid));
    for (let i = 0; i < fresh.length; i += MEMPOOL_BATCH) {
      const chunk = fresh.slice(i, i + MEMPOOL_BATCH);
      const outcomes = await this.rpc.batch(chunk.map((txid) => ({ method: 'getrawtransaction', params: [txid, false] })), signal);
      outcomes.forEach((o, j) => {
        if (!o.ok || typeof o.result !== 'string') return;
        this.pooled.set(chunk[j]!, this.waitingTransfers(o.result, chunk[j]!));
      });
    }
    return [...this.pooled.values()].flat();
  }

  /**
   * A mempool transaction's transfers. One this parser cannot read counts as paying nobody rather
   * than stopping the chain's scan: if it pays us, its block says so (and is checked strictly).
   */
  private waitingTransfers(rawHex: string, txid: string): NormalisedTransfer[] {
    let parsed: ReturnType<typeof parseTransaction>;
    try {
      parsed = parseTransaction(rawHex, this.network);
    } catch {
      return [];
    }
    if (parsed.txid !== txid) throw new Error(`bitcoin node getrawtransaction: asked for ${txid}, got ${parsed.txid}`);
    return parsed.transfers;
  }

  /** Broadcasts a signed transaction (hex); returns its txid. */
  async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    return this.rpc.call<string>('sendrawtransaction', [rawHex], signal);
  }

  /**
   * The fee rate for confirmation within the configured target. Core answers `feerate` (BTC/kvB),
   * bcoin `fee` (BTC/kB, -1 without data); no estimate falls back to the configured rate.
   */
  async feeRate(signal?: AbortSignal): Promise<FeeRate> {
    const estimate = await this.rpc.call<{ feerate?: unknown; fee?: unknown } | null>('estimatesmartfee', [this.fees.target_blocks], signal);
    const perKvb = typeof estimate?.feerate === 'number' ? estimate.feerate : typeof estimate?.fee === 'number' ? estimate.fee : -1;
    if (!(perKvb > 0)) return { satPerVbyte: this.fees.fallback_sat_vb, source: 'fallback' };
    // Whole satoshi per kvB first: a float such as 0.00002 × 1e8 is not exactly 2000.
    return { satPerVbyte: Math.max(1, Math.ceil(Math.round(perKvb * 1e8) / 1000)), source: 'node' };
  }
}
