import { Transaction, type Network } from 'bitcoinjs-lib';
import type { BtcFeeOptions, ChainConfig } from '../../config/schema';
import {
  NodeFault,
  type BlockHeader,
  type BlockRef,
  type ChainAdapter,
  type ChainNodeSet,
  type FeeQuote,
  type HoldingsQuery,
  type NormalisedBlock,
  type NormalisedTransfer,
  TransactionRefused,
} from '../types';
import { btcNetwork } from './derive';
import { outputAddress, outputScript, parseBlock, parseTransaction } from './parse';
import { btcBroadcastAnswer } from './refusal';
import { BitcoinRpc, BitcoinRpcError } from './rpc';

/** Bitcoin Core's answer to `getblock` of a block a pruned node has deleted. */
const PRUNED = /block not available \(pruned data\)/i;
/** Raw transactions asked for per request while reading the mempool: bounded answers on a busy node. */
const MEMPOOL_BATCH = 250;
/** Outputs asked for per request by a reconciliation. */
const HOLDINGS_BATCH = 500;

/**
 * The names `getblockchaininfo` gives each configured network: Bitcoin Core's (`main`, `test`,
 * `testnet4`, `signet`, `regtest`) and bcoin's (`main`, `test`, `regtest`).
 */
const NODE_CHAINS: Record<string, readonly string[]> = {
  mainnet: ['main'],
  testnet: ['test', 'testnet4'],
  signet: ['signet'],
  regtest: ['regtest'],
};

/**
 * A Bitcoin node (Bitcoin Core or bcoin) as the chain core sees it, over the JSON-RPC both share.
 * Blocks and transactions are read raw and parsed here with bitcoinjs-lib, so the two nodes take the
 * same code path: `getblock HASH 0` (Core's verbosity 0, bcoin's verbose false) and
 * `getrawtransaction TXID false` of mempool transactions only: nothing here needs a transaction
 * index (Bitcoin Core's `-txindex`, bcoin's `--index-tx`), which real nodes run without.
 */
export class BtcAdapter implements ChainAdapter {
  readonly chainId: string;
  private readonly network: Network;
  private readonly fees: BtcFeeOptions;
  private readonly configuredNetwork: string;
  /** The mempool's transactions already parsed, by txid: each poll fetches only the new ones. */
  private readonly pooled = new Map<string, NormalisedTransfer[]>();

  /** `rpc`: the node's JSON-RPC (the chain's endpoints, pooled); `nodes`: those endpoints, for the chain core. */
  constructor(
    chain: ChainConfig,
    private readonly rpc: Pick<BitcoinRpc, 'call' | 'all' | 'batch'> = new BitcoinRpc(chain.rpc_url!, chain.watch.rpc_timeout_ms),
    readonly nodes?: ChainNodeSet,
  ) {
    this.chainId = chain.id;
    this.network = btcNetwork(chain);
    this.fees = chain.fees!;
    this.configuredNetwork = chain.network ?? 'mainnet';
  }

  /**
   * The best block, and the network the node is on, in one call: a node of another network (at
   * first contact, after a restart on other settings, or behind a different node at the same URL)
   * would credit its payments to this one's coins, so every poll checks it.
   */
  async tip(signal?: AbortSignal): Promise<BlockRef> {
    const info = await this.rpc.call<{ chain?: unknown; blocks?: unknown; bestblockhash?: unknown; time?: unknown }>('getblockchaininfo', [], signal);
    if (!NODE_CHAINS[this.configuredNetwork]!.includes(String(info.chain)))
      throw new NodeFault(`bitcoin node is on chain ${String(info.chain)}, the config says ${this.configuredNetwork}`);
    if (!Number.isSafeInteger(info.blocks) || typeof info.bestblockhash !== 'string') throw new NodeFault('bitcoin node getblockchaininfo: no best block');
    // Bitcoin Core gives the best block's time here (bcoin does not): the staleness of PRODUCT §15.
    return { height: info.blocks as number, hash: info.bestblockhash, ...(Number.isSafeInteger(info.time) ? { time: info.time as number } : {}) };
  }

  async header(height: number, signal?: AbortSignal): Promise<BlockHeader> {
    const hash = await this.rpc.call<string>('getblockhash', [height], signal);
    const header = await this.rpc.call<{ previousblockhash?: string }>('getblockheader', [hash, true], signal);
    // Only the genesis block has no parent.
    return { height, hash, parentHash: header.previousblockhash ?? '0'.repeat(64) };
  }

  async blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]> {
    const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const hashes = await this.rpc.all<string>(
      heights.map((h) => ({ method: 'getblockhash', params: [h] })),
      signal,
    );
    const outcomes = await this.rpc.batch(
      hashes.map((hash) => ({ method: 'getblock', params: [hash, 0] })),
      signal,
    );
    const pruned = outcomes.findIndex((o) => !o.ok && PRUNED.test(o.error.message));
    if (pruned >= 0) throw await this.prunedFault(heights[pruned]!, signal);
    const raws = outcomes.map((o) => {
      if (!o.ok) throw o.error;
      return o.result as string;
    });
    return raws.map((hex, i) => {
      const block = parseBlock(hex, heights[i]!, this.network);
      if (block.hash !== hashes[i]) throw new Error(`bitcoin node getblock: asked for ${hashes[i]}, got ${block.hash}`);
      return block;
    });
  }

  /**
   * A pruned node (Bitcoin Core `-prune`) keeps only the newest blocks: one the scanner needs below
   * its prune height (a long catch-up, a deep reorganisation) will never come back, so the poll
   * fails with what to do rather than asking again as if the node were busy.
   */
  private async prunedFault(height: number, signal?: AbortSignal): Promise<NodeFault> {
    const info = await this.rpc.call<{ pruneheight?: unknown }>('getblockchaininfo', [], signal).catch(() => null);
    const keeps = Number.isSafeInteger(info?.pruneheight) ? ` (it keeps blocks from ${info!.pruneheight as number})` : '';
    return new NodeFault(
      `bitcoin node has pruned block ${height}, which the scanner needs${keeps}: give the chain a node that has it (add an unpruned node to rpc_urls, or restart this one with a larger -prune and -reindex)`,
    );
  }

  /** An address's output script: the watch key its transfers carry, so only watched outputs are encoded as text. */
  watchKey(address: string): Uint8Array | null {
    return outputScript(address, this.network);
  }

  /** An address of this network whose output script is a standard template (P2PKH, P2SH, P2WPKH, P2WSH, P2TR). */
  payable(address: string): boolean {
    const script = outputScript(address, this.network);
    return script !== null && outputAddress(script, this.network) !== null;
  }

  /** Bitcoin Core's dust threshold of the costliest standard output (P2PKH), so no template is refused as dust. */
  readonly minimumPayment = 546n;

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
      const outcomes = await this.rpc.batch(
        chunk.map((txid) => ({ method: 'getrawtransaction', params: [txid, false] })),
        signal,
      );
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
    } catch (err) {
      if (err instanceof NodeFault) throw err;
      return [];
    }
    if (parsed.txid !== txid) throw new Error(`bitcoin node getrawtransaction: asked for ${txid}, got ${parsed.txid}`);
    return parsed.transfers;
  }

  /**
   * Broadcasts a signed transaction (hex); returns its txid. One the node already holds (mempool or
   * chain) counts as broadcast; a reject reason about the transaction itself is TransactionRefused.
   */
  async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    const txid = Transaction.fromHex(rawHex).getId();
    try {
      return await this.rpc.call<string>('sendrawtransaction', [rawHex], signal);
    } catch (err) {
      if (!(err instanceof BitcoinRpcError)) throw err;
      const answer = btcBroadcastAnswer(err.rpcCode, err.message);
      if (answer === 'known') return txid;
      if (answer === 'refused') throw new TransactionRefused(err.message);
      throw err;
    }
  }

  /**
   * What the node's mempool holds of `txid` with its descendants: their fees together (satoshi),
   * which a BIP125 replacement must outbid; null when it is not in the mempool. Core answers
   * `fees.descendant` (BTC), bcoin `descendantfees` (satoshi).
   */
  async mempoolFees(txid: string, signal?: AbortSignal): Promise<bigint | null> {
    const [outcome] = await this.rpc.batch([{ method: 'getmempoolentry', params: [txid] }], signal);
    if (!outcome!.ok) {
      // -5: not in the mempool (mined, dropped, or never seen); anything else is the node's trouble.
      if (outcome!.error.rpcCode === -5 || /not in mempool/i.test(outcome!.error.message)) return null;
      throw outcome!.error;
    }
    const entry = outcome!.result as { fees?: { descendant?: unknown }; descendantfees?: unknown } | null;
    const btc = entry?.fees?.descendant;
    if (typeof btc === 'number' && btc >= 0 && btc <= 21e6) return BigInt(Math.round(btc * 1e8));
    const sat = entry?.descendantfees;
    if (typeof sat === 'number' && Number.isSafeInteger(sat) && sat >= 0) return BigInt(sat);
    throw new NodeFault(`bitcoin node getmempoolentry ${txid}: no descendant fees`);
  }

  /**
   * The fee rate for confirmation within the configured target. Core answers `feerate` (BTC/kvB),
   * bcoin `fee` (BTC/kB, -1 without data); no estimate falls back to the configured rate.
   */
  async feeQuote(signal?: AbortSignal): Promise<FeeQuote> {
    const estimate = await this.rpc.call<{ feerate?: unknown; fee?: unknown } | null>('estimatesmartfee', [this.fees.target_blocks], signal);
    const perKvb = typeof estimate?.feerate === 'number' ? estimate.feerate : typeof estimate?.fee === 'number' ? estimate.fee : -1;
    if (!(perKvb > 0)) return { kind: 'btc', satPerVbyte: this.fees.fallback_sat_vb, source: 'fallback' };
    // Whole satoshi per kvB first: a float such as 0.00002 × 1e8 is not exactly 2000.
    return { kind: 'btc', satPerVbyte: Math.max(1, Math.ceil(Math.round(perKvb * 1e8) / 1000)), source: 'node' };
  }

  /**
   * The wallet's stored outputs that are unspent in a block (`gettxout` without the mempool, which
   * Core and bcoin both answer from the UTXO set; null for a spent or unknown output), summed under
   * `native`. A mempool spend is not counted yet: the books settle a payout only once it is mined.
   */
  async holdings(query: HoldingsQuery, signal?: AbortSignal): Promise<Map<string, bigint>> {
    let sats = 0n;
    for (let i = 0; i < query.outputs.length; i += HOLDINGS_BATCH) {
      const chunk = query.outputs.slice(i, i + HOLDINGS_BATCH);
      const coins = await this.rpc.all<{ value?: unknown; confirmations?: unknown } | null>(
        chunk.map((o) => ({ method: 'gettxout', params: [o.txid, o.index, false] })),
        signal,
      );
      for (const coin of coins) {
        if (coin === null) continue;
        if (typeof coin.value !== 'number' || !(coin.value >= 0) || coin.value > 21e6)
          throw new NodeFault(`bitcoin node gettxout: the value ${String(coin.value).slice(0, 40)}`);
        sats += BigInt(Math.round(coin.value * 1e8));
      }
    }
    return new Map([['native', sats]]);
  }
}
