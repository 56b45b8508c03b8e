import { getAddress, id } from 'ethers';
import type { ChainConfig } from '../../config/schema';
import type { BlockHeader, BlockRef, ChainAdapter, NormalisedBlock, NormalisedTransfer } from '../types';
import { EvmRpc } from './json-rpc';

/** topic0 of ERC-20 `Transfer(address indexed from, address indexed to, uint256 value)`. */
const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

/** How often one `blocks` call re-reads a range the node reorganised while it was being read. */
const CONSISTENT_READ_ATTEMPTS = 3;

interface RpcHeader {
  number: string;
  hash: string;
  parentHash: string;
}

interface RpcTransaction {
  hash: string;
  to: string | null;
  value: string;
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

/**
 * The EVM family's adapter: native value carried by a block's transactions, and the `Transfer` logs
 * of the configured ERC-20 contracts (one eth_getLogs over the range by contract and topic). A
 * transaction's value to one of our addresses always arrives: they are plain accounts without code,
 * which cannot revert a value transfer. Value moved by contract internals (a contract sending ether
 * in an internal call) is not a transaction's value nor a log, and is not seen (README "Chains").
 */
export class EvmAdapter implements ChainAdapter {
  readonly chainId: string;
  private readonly rpc: Pick<EvmRpc, 'call' | 'batch'>;
  private readonly expectedChainId: number;
  private networkChecked = false;
  /** Lower-case contract → the contract as configured (the catalogue's asset). */
  private readonly tokens = new Map<string, string>();

  /** `rpc`: the node's JSON-RPC (tests give a node in memory). */
  constructor(chain: ChainConfig, rpc?: Pick<EvmRpc, 'call' | 'batch'>) {
    this.chainId = chain.id;
    this.expectedChainId = chain.chain_id!;
    this.rpc = rpc ?? new EvmRpc(chain.rpc_url!, chain.watch.rpc_timeout_ms);
    for (const t of chain.tokens) this.tokens.set(t.contract.toLowerCase(), t.contract);
  }

  async tip(signal?: AbortSignal): Promise<BlockRef> {
    await this.checkNetwork(signal);
    const b = await this.rpcHeader('latest', signal);
    return { height: Number(b.number), hash: b.hash };
  }

  async header(height: number, signal?: AbortSignal): Promise<BlockHeader> {
    return toHeader(await this.rpcHeader(hex(height), signal));
  }

  async blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]> {
    for (let attempt = 1; ; attempt++) {
      const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
      const [blocks, logs] = await Promise.all([
        this.rpc.batch<RpcBlock | null>(heights.map((h) => ({ method: 'eth_getBlockByNumber', params: [hex(h), true] })), signal),
        this.transferLogs(from, to, signal),
      ]);
      const missing = blocks.findIndex((b) => !b);
      if (missing >= 0) throw new Error(`evm node has no block ${from + missing}`);
      const normalised = this.normalise(blocks as RpcBlock[], logs);
      if (normalised) return normalised;
      if (attempt === CONSISTENT_READ_ATTEMPTS) throw new Error(`evm node: blocks ${from}..${to} changed while they were read; retrying at the next poll`);
    }
  }

  /** Once per adapter: a node of another network would credit its payments to this one's coins. */
  private async checkNetwork(signal?: AbortSignal): Promise<void> {
    if (this.networkChecked) return;
    const theirs = Number(await this.rpc.call<string>('eth_chainId', [], signal));
    if (theirs !== this.expectedChainId) throw new Error(`evm node is on chain id ${theirs}, the config says ${this.expectedChainId}`);
    this.networkChecked = true;
  }

  private async rpcHeader(tag: string, signal?: AbortSignal): Promise<RpcHeader> {
    const b = await this.rpc.call<RpcHeader | null>('eth_getBlockByNumber', [tag, false], signal);
    if (!b) throw new Error(`evm node has no block ${tag === 'latest' ? tag : Number(tag)}`);
    return b;
  }

  private async transferLogs(from: number, to: number, signal?: AbortSignal): Promise<RpcLog[]> {
    if (this.tokens.size === 0) return [];
    const filter = { fromBlock: hex(from), toBlock: hex(to), address: [...this.tokens.keys()], topics: [TRANSFER_TOPIC] };
    return this.rpc.call<RpcLog[]>('eth_getLogs', [filter], signal);
  }

  /** The blocks with their transfers; null when a log belongs to another branch than its block. */
  private normalise(blocks: RpcBlock[], logs: RpcLog[]): NormalisedBlock[] | null {
    const out = blocks.map((b): NormalisedBlock => ({ ...toHeader(b), transfers: nativeTransfers(b) }));
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
      amount: BigInt(log.data),
      txid: log.transactionHash,
      index: Number(log.logIndex),
    };
  }
}

const toHeader = (b: RpcHeader): BlockHeader => ({ height: Number(b.number), hash: b.hash, parentHash: b.parentHash });

function nativeTransfers(b: RpcBlock): NormalisedTransfer[] {
  const out: NormalisedTransfer[] = [];
  for (const tx of b.transactions) {
    if (!tx.to || BigInt(tx.value) === 0n) continue;
    out.push({ asset: 'native', to: getAddress(tx.to), amount: BigInt(tx.value), txid: tx.hash, index: 0 });
  }
  return out;
}
