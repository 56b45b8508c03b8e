import { getAddress } from 'ethers/address';
import { keccak256 } from 'ethers/crypto';
import { Transaction } from 'ethers/transaction';
import type { ChainConfig, EvmFeeModel } from '../../config/schema';
import {
  NodeFault,
  NodeUnavailable,
  StateUnavailable,
  type BlockHeader,
  type BlockRef,
  type ChainAdapter,
  type ChainNodeSet,
  type FeeQuote,
  type HoldingsQuery,
  type NormalisedBlock,
  type NormalisedSpend,
  type NormalisedTransfer,
  type SentStatus,
  type SentTransaction,
  TransactionRefused,
} from '../types';
import { readConsistently } from '../consistent-read';
import { DECIMALS_SELECTOR, decimalsOf, MAX_AMOUNT, TRANSFER_TOPIC, transferLog, type TransferLog } from '../token-transfer';
import { isHexAddress } from './address-text';
import { erc20BalanceOfData } from './erc20';
import { EvmRpc, RpcError, type EvmTransport, type RpcCall } from './json-rpc';
import { evmBroadcastAnswer } from './refusal';
import { feeModelOf, GAS_PRICE_ORACLE, getL1FeeData, L1_FEE_MARGIN, l1FeeProbe, padArbitrumGas, receiptFee, type ModelCosts } from './fee-model';

/** Blocks of fee history behind a quote, and the percentile of their tips that sets ours. */
const FEE_HISTORY_BLOCKS = 10;
const TIP_PERCENTILE = 50;

/** The plain transfer Arbitrum's native transfer gas is estimated on (no value: the sender need hold nothing). */
const ARBITRUM_PROBE_FROM = '0x000000000000000000000000000000000000dead';
const ARBITRUM_PROBE_TO = '0x00000000000000000000000000000000c01e4bee';

interface RpcHeader {
  number: string;
  hash: string;
  parentHash: string;
  timestamp?: string;
}

interface RpcTransaction {
  hash: string;
  from: string;
  nonce: string;
  to: string | null;
  value: string;
}

interface RpcReceipt {
  blockNumber: string;
  blockHash: string;
  status: string;
  gasUsed: string;
  effectiveGasPrice?: string;
  /** OP-stack: the L1 data fee the sender paid beside its gas (wei). */
  l1Fee?: string;
  logs?: Array<{ address: string; topics: string[]; data: string }>;
}

/** A mined transaction's receipt: where, whether it succeeded, what it cost (wei), and the token transfers it made. */
export interface EvmReceipt {
  height: number;
  blockHash: string;
  succeeded: boolean;
  /** gasUsed × effectiveGasPrice, plus the L1 data fee of an OP-stack receipt (fee-model.ts receiptFee). */
  fee: bigint;
  /** Its `Transfer` logs, of any contract. */
  transfers: TransferLog[];
}

/** An EVM call or value transfer to estimate (`data`: a contract call). */
export interface EvmCall {
  from: string;
  to: string;
  value?: bigint;
  data?: string;
}

interface RpcBlock extends RpcHeader {
  transactions: RpcTransaction[];
}

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

const hex = (n: number): string => `0x${n.toString(16)}`;

/** A receipt or transaction geth cannot look up yet (its indexer at work). */
const NOT_YET = Symbol('not known yet');

/** A node's word that it keeps no state at the block asked for (geth, erigon, reth, Nethermind, Besu wordings). */
const STATE_GONE =
  /missing trie node|header not found|state .*(not available|unavailable|pruned)|historical state|no state available|state histor(y|ies)|pruned (state|history)|world state .*not available/i;

/**
 * The EVM family's adapter: native value carried by a block's transactions, and the `Transfer` logs
 * of the configured ERC-20 contracts (one eth_getLogs over the range by contract and topic). A
 * transaction's value to one of our addresses always arrives: they are plain accounts without code,
 * which cannot revert a value transfer. Value moved by contract internals (a contract sending ether
 * in an internal call) is not a transaction's value nor a log, and is not seen (docs/chains.md).
 */
export class EvmAdapter implements ChainAdapter {
  readonly chainId: string;
  private readonly rpc: EvmTransport;
  private readonly expectedChainId: number;
  /** Lower-case contract → the contract as configured (the catalogue's asset). */
  private readonly tokens = new Map<string, string>();
  private readonly feeModel: EvmFeeModel;

  /** `rpc`: the node's JSON-RPC (the chain's endpoints, pooled, one EvmRpc each; tests give a node in memory); `nodes`: those endpoints, for the chain core. */
  constructor(
    chain: ChainConfig,
    rpc?: EvmTransport,
    readonly nodes?: ChainNodeSet,
  ) {
    this.chainId = chain.id;
    this.expectedChainId = chain.chain_id!;
    this.rpc = rpc ?? new EvmRpc(chain.rpc_url!, chain.watch.rpc_timeout_ms, { maxBatch: chain.nodes?.max_batch, logsRange: chain.nodes?.logs_range });
    for (const t of chain.tokens) this.tokens.set(t.contract.toLowerCase(), t.contract);
    this.feeModel = feeModelOf(chain);
  }

  /**
   * The best block, and the chain id, side by side: a node of another network (at first contact,
   * after a restart on other settings, or behind a different node at the same URL) would credit its
   * payments to this one's coins, so every poll checks it.
   */
  async tip(signal?: AbortSignal): Promise<BlockRef> {
    const [theirs, b] = await Promise.all([this.rpc.call<string>('eth_chainId', [], signal), this.rpcHeader('latest', signal)]);
    if (Number(theirs) !== this.expectedChainId) throw new NodeFault(`evm node is on chain id ${Number(theirs)}, the config says ${this.expectedChainId}`);
    return { height: Number(b.number), hash: b.hash, ...(b.timestamp ? { time: Number(b.timestamp) } : {}) };
  }

  async header(height: number, signal?: AbortSignal): Promise<BlockHeader> {
    return toHeader(await this.rpcHeader(hex(height), signal));
  }

  async blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]> {
    return readConsistently('evm node', from, to, async () => {
      const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
      const [blocks, logs] = await Promise.all([
        this.rpc.batch<RpcBlock | null>(
          heights.map((h) => ({ method: 'eth_getBlockByNumber', params: [hex(h), true] })),
          signal,
        ),
        this.transferLogs(from, to, signal),
      ]);
      const missing = blocks.findIndex((b) => !b);
      if (missing >= 0) throw new Error(`evm node has no block ${from + missing}`);
      return this.normalise(blocks as RpcBlock[], logs);
    });
  }

  async balancesAt(addresses: readonly string[], assets: readonly string[], height: number | null, signal?: AbortSignal): Promise<bigint[][]> {
    const at = height === null ? 'latest' : hex(height);
    const calls = addresses.flatMap((a) =>
      assets.map((asset) =>
        asset === 'native' ? { method: 'eth_getBalance', params: [a, at] } : { method: 'eth_call', params: [{ to: asset, data: erc20BalanceOfData(a) }, at] },
      ),
    );
    const answers = await this.stateAt<string>(calls, height, signal);
    return addresses.map((a, i) =>
      assets.map((asset, j) => {
        const answer = answers[i * assets.length + j]!;
        if (typeof answer !== 'string' || !/^0x[0-9a-fA-F]{0,64}$/.test(answer)) throw new NodeFault(`evm node: the ${asset} balance of ${a} is not a number`);
        return answer === '0x' ? 0n : BigInt(answer);
      }),
    );
  }

  /**
   * A batch of state reads at `height` (null: the newest block). A node without the state there (one
   * without archive state keeps 128 blocks) throws StateUnavailable, for the caller's fallback.
   */
  private async stateAt<T>(calls: RpcCall[], height: number | null, signal?: AbortSignal): Promise<T[]> {
    try {
      return await this.rpc.batch<T>(calls, signal);
    } catch (err) {
      if (height !== null && err instanceof RpcError && STATE_GONE.test(err.message))
        throw new StateUnavailable(
          `evm node keeps no state at block ${height} (a node without archive state): ${err.message.replace(/^evm node [^:]*: /, '')}`,
          height,
        );
      throw err;
    }
  }

  private async rpcHeader(tag: string, signal?: AbortSignal): Promise<RpcHeader> {
    const b = await this.rpc.call<RpcHeader | null>('eth_getBlockByNumber', [tag, false], signal);
    if (!b) throw new Error(`evm node has no block ${tag === 'latest' ? tag : Number(tag)}`);
    return b;
  }

  private async transferLogs(from: number, to: number, signal?: AbortSignal): Promise<RpcLog[]> {
    if (this.tokens.size === 0) return [];
    const filter = { address: [...this.tokens.keys()], topics: [TRANSFER_TOPIC] };
    if (this.rpc.getLogs) return this.rpc.getLogs<RpcLog>(filter, from, to, signal);
    return this.rpc.call<RpcLog[]>('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to), ...filter }], signal);
  }

  /** The blocks with their transfers; null when a log belongs to another branch than its block. */
  private normalise(blocks: RpcBlock[], logs: RpcLog[]): NormalisedBlock[] | null {
    const out = blocks.map((b): NormalisedBlock => ({
      ...toHeader(b),
      transfers: nativeTransfers(b),
      spends: b.transactions.map((tx) => new TransactionSpend(tx)),
    }));
    const first = out[0]!.height;
    for (const log of logs) {
      const block = out[Number(log.blockNumber) - first];
      if (!block || log.blockHash !== block.hash || log.removed) return null;
      const transfer = this.tokenTransfer(log);
      if (transfer) block.transfers.push(transfer);
    }
    return out;
  }

  /** A `Transfer` log of a configured token; null for lookalikes (ERC-721's has a 4th topic). */
  private tokenTransfer(log: RpcLog): NormalisedTransfer | null {
    const asset = this.tokens.get(log.address.toLowerCase());
    if (!asset || log.topics.length !== 3 || log.topics[0] !== TRANSFER_TOPIC || log.data.length !== 66) return null;
    if (!/^0x0{24}[0-9a-fA-F]{40}$/.test(log.topics[2]!)) return null;
    return {
      asset,
      to: getAddress('0x' + log.topics[2]!.slice(26)),
      amount: amountOf(log.data, `log ${log.transactionHash}:${Number(log.logIndex)}`),
      txid: log.transactionHash,
      index: Number(log.logIndex),
    };
  }

  /**
   * The next block's fees by the chain's fee model (fee-model.ts). EIP-1559 (and OP-stack,
   * Arbitrum) from the node's fee history: the next block's base fee, the median tip of the last
   * blocks, and a fee cap of twice the base fee plus the tip (room for six full blocks of growth).
   * A node answering no base fee (or 0: geth does so on a chain without EIP-1559) cannot be quoted
   * so: an error names the setting (`fee_model: legacy`), rather than transactions of a type the
   * chain refuses. `legacy`: the node's gas price (eth_gasPrice) as both caps, transactions signed
   * as type 0 (EIP-155). OP-stack adds the L1 data fee reserved per transaction (the
   * GasPriceOracle's price of the largest transaction the wallet sends, L1_FEE_MARGIN times);
   * Arbitrum a native transfer's gas (eth_estimateGas, padded: the L1 cost is inside the gas).
   */
  async feeQuote(signal?: AbortSignal): Promise<FeeQuote> {
    if (this.feeModel === 'legacy') {
      const gasPrice = amountOf(await this.rpc.call<string>('eth_gasPrice', [], signal), 'eth_gasPrice');
      return { kind: 'evm', baseFeePerGas: 0n, maxPriorityFeePerGas: gasPrice, maxFeePerGas: gasPrice, legacy: true };
    }
    const [history, extra] = await Promise.all([
      this.rpc.call<{ baseFeePerGas?: string[]; reward?: string[][] }>('eth_feeHistory', [hex(FEE_HISTORY_BLOCKS), 'latest', [TIP_PERCENTILE]], signal),
      this.modelCosts(signal),
    ]);
    const next = history.baseFeePerGas?.at(-1);
    const baseFeePerGas = next === undefined || next === null ? 0n : amountOf(next, 'eth_feeHistory base fee');
    if (baseFeePerGas === 0n)
      throw new Error(
        `chain ${this.chainId}: the node answers no EIP-1559 base fee (fee_model ${this.feeModel}); a chain without EIP-1559 takes chains[].fee_model: legacy`,
      );
    const tips = (history.reward ?? []).map((r) => amountOf(r[0] ?? '0x0', 'eth_feeHistory reward')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const maxPriorityFeePerGas = tips.length > 0 ? tips[Math.floor(tips.length / 2)]! : 0n;
    return { kind: 'evm', baseFeePerGas, maxPriorityFeePerGas, maxFeePerGas: 2n * baseFeePerGas + maxPriorityFeePerGas, ...extra };
  }

  /** What the chain's model adds to a quote (fee-model.ts ModelCosts). */
  private async modelCosts(signal?: AbortSignal): Promise<ModelCosts> {
    if (this.feeModel === 'op-stack') {
      const answer = await this.rpc.call<string>(
        'eth_call',
        [{ to: GAS_PRICE_ORACLE, data: getL1FeeData(l1FeeProbe(this.expectedChainId)) }, 'latest'],
        signal,
      );
      if (typeof answer !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(answer))
        throw new Error(
          `chain ${this.chainId}: the GasPriceOracle (${GAS_PRICE_ORACLE}) answers no L1 fee (${String(answer).slice(0, 80)}): is it an OP-stack chain (fee_model op-stack)?`,
        );
      return { l1Fee: L1_FEE_MARGIN * amountOf(answer, 'GasPriceOracle getL1Fee') };
    }
    if (this.feeModel === 'arbitrum') {
      const estimate = await this.estimateGas({ from: ARBITRUM_PROBE_FROM, to: ARBITRUM_PROBE_TO, value: 0n }, signal);
      return { transferGas: padArbitrumGas(estimate) };
    }
    return {};
  }

  /** Sends a signed transaction (hex); one the node already holds (geth's `already known`, anvil's `already imported`) counts as sent. */
  async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    try {
      return await this.rpc.call<string>('eth_sendRawTransaction', [rawHex], signal);
    } catch (err) {
      if (!(err instanceof Error) || err instanceof NodeUnavailable) throw err;
      const answer = evmBroadcastAnswer(err instanceof RpcError && err.answered, err.message);
      if (answer === 'known') return keccak256(rawHex);
      if (answer === 'refused') throw new TransactionRefused(err.message);
      throw err;
    }
  }

  /**
   * Mined when the node has its receipt (`succeeded` from the receipt's status); in the mempool
   * while the node knows it unmined; conflicted once its sender's nonce, pending transactions
   * counted, passed it while the node does not know it (another transaction took its nonce: a
   * replacement waiting or mined); otherwise unknown.
   */
  async sentStatus(sent: SentTransaction, signal?: AbortSignal): Promise<SentStatus> {
    const tx = Transaction.from(sent.raw);
    // geth's indexer at work answers for a transaction it does not know yet (NOT_YET): nothing is concluded from the nonce then.
    const [receipt, known, taken] = await this.rpc.batch<unknown>(
      [
        { method: 'eth_getTransactionReceipt', params: [sent.txid] },
        { method: 'eth_getTransactionByHash', params: [sent.txid] },
        { method: 'eth_getTransactionCount', params: [tx.from, 'pending'] },
      ],
      signal,
      { notYet: NOT_YET },
    );
    if (receipt === NOT_YET || known === NOT_YET) return { state: 'unknown' };
    if (receipt) {
      const r = receipt as RpcReceipt;
      return { state: 'mined', height: Number(r.blockNumber), blockHash: r.blockHash, succeeded: r.status === '0x1' };
    }
    if (known) return { state: 'mempool' };
    return Number(taken) > tx.nonce ? { state: 'conflicted' } : { state: 'unknown' };
  }

  /** A watched address's 20 bytes: the core screens the senders of a block's transactions on them. */
  watchKey(address: string): Uint8Array | null {
    return evmWatchKey(address);
  }

  /**
   * The native balance (eth_getBalance) and each token's balanceOf (eth_call) of every address, at
   * the query's block (the core's scanned height: what the books can know of) or the latest; one
   * batch of calls for all of them (the RPC client cuts it into requests of 100).
   */
  async holdings(query: HoldingsQuery, signal?: AbortSignal): Promise<Map<string, bigint>> {
    const tag = query.height === null ? 'latest' : hex(query.height);
    const calls = query.assets.flatMap((asset) =>
      query.addresses.map((address) =>
        asset === 'native'
          ? { method: 'eth_getBalance', params: [address, tag] }
          : { method: 'eth_call', params: [{ to: asset, data: erc20BalanceOfData(address) }, tag] },
      ),
    );
    const answers = await this.stateAt<string>(calls, query.height, signal);
    const out = new Map<string, bigint>();
    query.assets.forEach((asset, a) => {
      let sum = 0n;
      for (let i = 0; i < query.addresses.length; i++) {
        const answer = answers[a * query.addresses.length + i];
        // A contract that returns nothing (no code at that address) holds nothing anyone can move.
        sum += answer === '0x' ? 0n : amountOf(answer, `${asset === 'native' ? 'balance' : 'balanceOf'} of ${query.addresses[i]}`);
      }
      out.set(asset, sum);
    });
    return out;
  }

  /**
   * A payable EVM address: 0x and 40 hex digits; mixed case must be its EIP-55 checksum (all lower
   * or all upper case carries none and is accepted).
   */
  payable(address: string): boolean {
    if (!isHexAddress(address)) return false;
    const digits = address.slice(2);
    if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return true;
    // ethers refuses a mixed-case address whose checksum is wrong.
    return getAddress(address.toLowerCase()) === address;
  }

  /** Any positive amount can be paid. */
  readonly minimumPayment = 1n;

  /** The EIP-55 form of a payable address (the wallet's own addresses are stored in it). */
  canonicalAddress(address: string): string {
    return getAddress(address.toLowerCase());
  }

  /** Balances (base units) of `addresses` in `asset` (`native` or a configured token contract), at `tag`: one batched request. */
  async balances(addresses: readonly string[], asset: string, tag = 'latest', signal?: AbortSignal): Promise<bigint[]> {
    if (addresses.length === 0) return [];
    const calls =
      asset === 'native'
        ? addresses.map((a) => ({ method: 'eth_getBalance', params: [a, tag] }))
        : addresses.map((a) => ({ method: 'eth_call', params: [{ to: asset, data: erc20BalanceOfData(a) }, tag] }));
    const answers = await this.rpc.batch<string>(calls, signal);
    return answers.map((v) => (v === '0x' ? 0n : amountOf(v, `balance (${asset})`)));
  }

  /** What the token contract answers to `decimals()` (eth_call at the latest block); null when no such number (no code there, say). */
  async tokenDecimals(contract: string, signal?: AbortSignal): Promise<number | null> {
    return decimalsOf(await this.rpc.call<string>('eth_call', [{ to: contract, data: `0x${DECIMALS_SELECTOR}` }, 'latest'], signal));
  }

  /** The gas a call needs (eth_estimateGas); throws when the node says it would revert. */
  async estimateGas(call: EvmCall, signal?: AbortSignal): Promise<bigint> {
    return amountOf(await this.rpc.call<string>('eth_estimateGas', [estimateParams(call)], signal), 'eth_estimateGas');
  }

  /** The gas of each call, in batched requests; per call its gas or the node's refusal (it would revert). */
  async estimateGasAll(calls: readonly EvmCall[], signal?: AbortSignal): Promise<Array<{ gas: bigint } | { error: string }>> {
    const answers = await this.settled<string>(
      calls.map((c) => ({ method: 'eth_estimateGas', params: [estimateParams(c)] })),
      signal,
    );
    return answers.map((a) => ('error' in a ? a : { gas: amountOf(a.result, 'eth_estimateGas') }));
  }

  /**
   * Whether each call runs to its end with `gas` (eth_call at the latest block, one run each where
   * an estimate searches over a dozen): per call null, or the node's refusal (out of gas, a revert).
   */
  async succeedWithGas(calls: ReadonlyArray<EvmCall & { gas: bigint }>, signal?: AbortSignal): Promise<Array<string | null>> {
    const answers = await this.settled<string>(
      calls.map((c) => ({ method: 'eth_call', params: [{ ...estimateParams(c), gas: `0x${c.gas.toString(16)}` }, 'latest'] })),
      signal,
    );
    return answers.map((a) => ('error' in a ? a.error : null));
  }

  /**
   * The receipts of `txids` (null: not mined on the node's chain, or not known yet: geth's indexer
   * at work answers for those it has not reached), in one batched request.
   */
  async receipts(txids: readonly string[], signal?: AbortSignal): Promise<Array<EvmReceipt | null>> {
    if (txids.length === 0) return [];
    const answers = await this.rpc.batch<RpcReceipt | null | typeof NOT_YET>(
      txids.map((txid) => ({ method: 'eth_getTransactionReceipt', params: [txid] })),
      signal,
      { notYet: NOT_YET },
    );
    return answers.map((r) => {
      if (!r || r === NOT_YET) return null;
      const price = amountOf(r.effectiveGasPrice ?? '0x0', 'receipt effectiveGasPrice');
      const transfers = (r.logs ?? []).flatMap((log) => transferLog(log.address, log.topics, log.data) ?? []);
      return {
        height: Number(r.blockNumber),
        blockHash: r.blockHash,
        succeeded: r.status === '0x1',
        fee: receiptFee(amountOf(r.gasUsed, 'receipt gasUsed'), price, r.l1Fee === undefined || r.l1Fee === null ? null : amountOf(r.l1Fee, 'receipt l1Fee')),
        transfers,
      };
    });
  }

  /**
   * Sends several signed transactions (the sweeps of one pass) in batched requests, in the order
   * given. Per transaction its txid, or the node's refusal; one the node already holds counts as sent.
   */
  async broadcastAll(raws: readonly string[], signal?: AbortSignal): Promise<Array<{ txid: string } | { error: string }>> {
    const answers = await this.settled<string>(
      raws.map((raw) => ({ method: 'eth_sendRawTransaction', params: [raw] })),
      signal,
    );
    return answers.map((a, i) => ('error' in a ? (evmBroadcastAnswer(true, a.error) === 'known' ? { txid: keccak256(raws[i]!) } : a) : { txid: a.result }));
  }

  /**
   * What the node knows of sent transactions it has no receipt of, in batched requests (the sender
   * and nonce given, not recovered from the bytes): `mempool` while it holds one; `conflicted` once
   * its sender's nonce, pending transactions counted, passed it; otherwise `unknown`.
   */
  async sendStates(
    sends: ReadonlyArray<{ txid: string; from: string; nonce: number }>,
    signal?: AbortSignal,
  ): Promise<Array<'mempool' | 'conflicted' | 'unknown'>> {
    if (sends.length === 0) return [];
    const senders = [...new Set(sends.map((s) => s.from))];
    const answers = await this.rpc.batch<unknown>(
      [
        ...sends.map((s) => ({ method: 'eth_getTransactionByHash', params: [s.txid] })),
        ...senders.map((a) => ({ method: 'eth_getTransactionCount', params: [a, 'pending'] })),
      ],
      signal,
      { notYet: NOT_YET },
    );
    const pending = new Map(senders.map((a, i) => [a, Number(answers[sends.length + i])]));
    // Not known yet (geth indexing): nothing is concluded from the nonce, it may be this very transaction's.
    return sends.map((s, i) => (answers[i] === NOT_YET ? 'unknown' : answers[i] ? 'mempool' : pending.get(s.from)! > s.nonce ? 'conflicted' : 'unknown'));
  }

  /**
   * Which transaction used `from`'s `nonce`, by the sender's count at past blocks (a binary search
   * of [low, high]) and that block's body: what a node's lookups by hash may not answer (a backend
   * behind, an index lost) its blocks still hold. Null when the count does not pass the nonce by
   * `high`; txid null when it already did before `low`. A node without the state of those blocks throws.
   */
  async nonceHolder(from: string, nonce: number, low: number, high: number, signal?: AbortSignal): Promise<{ txid: string | null; height: number } | null> {
    const used = async (h: number) => Number(await this.rpc.call<string>('eth_getTransactionCount', [from, hex(h)], signal)) > nonce;
    if (high < low || !(await used(high))) return null;
    if (low > 0 && (await used(low - 1))) return { txid: null, height: low - 1 };
    let lo = low;
    let hi = high;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (await used(mid)) hi = mid;
      else lo = mid + 1;
    }
    const block = await this.rpc.call<{ transactions: RpcTransaction[] } | null>('eth_getBlockByNumber', [hex(lo), true], signal);
    const tx = block?.transactions.find((t) => t.from.toLowerCase() === from.toLowerCase() && Number(t.nonce) === nonce);
    return { txid: tx?.hash ?? null, height: lo };
  }

  /** Each call's result or error: batched when the RPC client can, else a request each, side by side. */
  private settled<T>(calls: RpcCall[], signal?: AbortSignal): Promise<Array<{ result: T } | { error: string }>> {
    if (calls.length === 0) return Promise.resolve([]);
    if (this.rpc.batchSettled) return this.rpc.batchSettled<T>(calls, signal);
    return Promise.all(
      calls.map((c) =>
        this.rpc.call<T>(c.method, c.params, signal).then(
          (result) => ({ result }),
          (err: unknown) => {
            signal?.throwIfAborted();
            return { error: err instanceof Error ? err.message : String(err) };
          },
        ),
      ),
    );
  }

  /** The next nonce of each of `addresses`, mempool included, in batched requests. */
  async pendingNonces(addresses: readonly string[], signal?: AbortSignal): Promise<number[]> {
    if (addresses.length === 0) return [];
    return (
      await this.rpc.batch<string>(
        addresses.map((a) => ({ method: 'eth_getTransactionCount', params: [a, 'pending'] })),
        signal,
      )
    ).map(Number);
  }

  async nonce(address: string, signal?: AbortSignal): Promise<{ latest: number; pending: number }> {
    const [latest, pending] = await this.rpc.batch<string>(
      ['latest', 'pending'].map((tag) => ({ method: 'eth_getTransactionCount', params: [address, tag] })),
      signal,
    );
    return { latest: Number(latest), pending: Number(pending) };
  }
}

/**
 * A transaction's spend: the sender's EIP-55 form costs a hash, so it is built on first read; the
 * core screens the block's spends on their watch key (the sender's 20 bytes) first.
 */
class TransactionSpend implements NormalisedSpend {
  readonly txid: string;
  readonly nonce: number;
  readonly watchKey: Uint8Array;
  private sender: string | undefined;
  constructor(private readonly tx: RpcTransaction) {
    this.txid = tx.hash;
    this.nonce = Number(tx.nonce);
    this.watchKey = evmWatchKey(tx.from) ?? new Uint8Array(0);
  }

  get from(): string {
    return (this.sender ??= getAddress(this.tx.from));
  }
}

/**
 * Base units from a node's hex quantity. Anything else (a negative or fractional number, a decimal
 * string, a value no real amount reaches) is the node's fault: nothing of its block is credited.
 */
function amountOf(value: unknown, what: string): bigint {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(value))
    throw new NodeFault(`evm node: ${what} has the value ${String(value).slice(0, 80)}, not a hex quantity`);
  const amount = BigInt(value);
  if (amount > MAX_AMOUNT) throw new NodeFault(`evm node: ${what} has the impossible value ${amount}`);
  return amount;
}

/** An EVM address's watch key: its 20 bytes, whatever the letters' case; null for a malformed one. */
function evmWatchKey(address: string): Uint8Array | null {
  return isHexAddress(address) ? Buffer.from(address.slice(2), 'hex') : null;
}

function estimateParams(call: EvmCall): Record<string, string> {
  const params: Record<string, string> = { from: call.from, to: call.to };
  if (call.value !== undefined) params.value = `0x${call.value.toString(16)}`;
  if (call.data) params.data = call.data;
  return params;
}

const toHeader = (b: RpcHeader): BlockHeader => ({ height: Number(b.number), hash: b.hash, parentHash: b.parentHash });

function nativeTransfers(b: RpcBlock): NormalisedTransfer[] {
  const out: NormalisedTransfer[] = [];
  for (const tx of b.transactions) {
    const amount = amountOf(tx.value, `transaction ${tx.hash}`);
    if (!tx.to || amount === 0n) continue;
    out.push({ asset: 'native', to: getAddress(tx.to), amount, txid: tx.hash, index: 0 });
  }
  return out;
}
