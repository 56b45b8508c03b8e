import { createHash } from 'node:crypto';
import type { ChainConfig } from '../../config/schema';
import {
  NodeFault,
  type BlockHeader,
  type BlockRef,
  type ChainAdapter,
  type FeeQuote,
  type HoldingsQuery,
  type NormalisedBlock,
  type NormalisedTransfer,
  type SentStatus,
  type SentTransaction,
} from '../types';
import { tronFromHex, tronToHex } from './derive';
import { readConsistently } from '../consistent-read';
import { MAX_AMOUNT, TRANSFER_TOPIC } from '../token-transfer';
import { TronFullNode } from './full-node';

/** Tron's logs give topics without 0x. */
const TRON_TRANSFER_TOPIC = TRANSFER_TOPIC.slice(2);

/** Blocks one getblockbylimitnext may ask for (java-tron refuses more than 100). */
const MAX_RANGE = 100;
/** Balance requests in flight at once during a reconciliation (the HTTP API has no batch). */
const HOLDINGS_PARALLEL = 16;

interface RawHeader {
  number?: number;
  parentHash: string;
  timestamp?: number;
}

interface TronBlock {
  blockID: string;
  block_header: { raw_data: RawHeader };
  transactions?: TronTransaction[];
}

interface TronTransaction {
  txID: string;
  ret?: Array<{ contractRet?: string }>;
  raw_data: { contract: Array<{ type: string; parameter: { value: Record<string, unknown> } }> };
}

interface TronTxInfo {
  id: string;
  blockNumber?: number;
  result?: string;
  receipt?: { result?: string };
  log?: Array<{ address: string; topics?: string[]; data?: string }>;
}

/**
 * The Tron family's adapter over a full node's HTTP API: TRX moved by TransferContract
 * transactions, and the `Transfer` logs of the configured TRC-20 contracts from calls that
 * succeeded (a failed or reverted call credits nothing, though it is mined and its fee paid).
 * Transaction infos are read only for blocks holding a call to a configured contract. Addresses
 * leave in base58 `T...`. TRX moved by contract internals, TRC-10 assets and tokens not configured
 * are not seen (README "Chains").
 */
export class TronAdapter implements ChainAdapter {
  readonly chainId: string;
  private readonly node: TronFullNode;
  /** 20-byte hex of the contract, lower-case without 41 (a log's `address`) → the contract as configured. */
  private readonly tokens = new Map<string, string>();

  constructor(chain: ChainConfig) {
    this.chainId = chain.id;
    this.node = new TronFullNode(chain.full_node_url!, chain.watch.rpc_timeout_ms, chain.api_key);
    for (const t of chain.tokens) this.tokens.set(tronToHex(t.contract).slice(2), t.contract);
  }

  async tip(signal?: AbortSignal): Promise<BlockRef> {
    const b = await this.node.post<TronBlock>('getnowblock', {}, signal);
    return toHeader(checkedBlock(b, undefined));
  }

  async header(height: number, signal?: AbortSignal): Promise<BlockHeader> {
    return toHeader(checkedBlock(await this.node.post<TronBlock>('getblockbynum', { num: height }, signal), height));
  }

  async blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]> {
    return readConsistently('tron node', from, to, async () => {
      const raw: TronBlock[] = [];
      for (let start = from; start <= to; start += MAX_RANGE) {
        const end = Math.min(to + 1, start + MAX_RANGE);
        const got = await this.node.post<{ block?: TronBlock[] }>('getblockbylimitnext', { startNum: start, endNum: end }, signal);
        const blocks = got.block ?? [];
        blocks.forEach((b, i) => raw.push(checkedBlock(b, start + i)));
        if (blocks.length !== end - start) throw new Error(`tron node has no block ${start + blocks.length}`);
      }
      return this.normalise(raw, signal);
    });
  }

  /** The blocks with their transfers; null when a block's transaction infos belong to another branch. */
  private async normalise(blocks: TronBlock[], signal?: AbortSignal): Promise<NormalisedBlock[] | null> {
    const out: NormalisedBlock[] = [];
    for (const b of blocks) {
      const block: NormalisedBlock = { ...toHeader(b), transfers: [] };
      const calls = new Set<string>();
      for (const tx of b.transactions ?? []) {
        const contract = tx.raw_data?.contract?.[0];
        if (!contract || tx.ret?.[0]?.contractRet !== 'SUCCESS') continue;
        const v = contract.parameter.value;
        if (contract.type === 'TransferContract') {
          block.transfers.push({ asset: 'native', to: addressOf(v.to_address, tx.txID), amount: sunOf(v.amount, tx.txID), txid: tx.txID, index: 0 });
        } else if (contract.type === 'TriggerSmartContract' && this.tokens.has(String(v.contract_address).slice(2).toLowerCase())) {
          calls.add(tx.txID);
        }
      }
      if (calls.size > 0) {
        const infos = await this.node.post<TronTxInfo[] | Record<string, never>>('gettransactioninfobyblocknum', { num: block.height }, signal);
        const list = Array.isArray(infos) ? infos : [];
        if (list.some((i) => i.blockNumber !== block.height) || [...calls].some((id) => !list.some((i) => i.id === id))) return null;
        for (const info of list) if (calls.has(info.id)) block.transfers.push(...this.tokenTransfers(info));
      }
      out.push(block);
    }
    return out;
  }

  /** The configured tokens' `Transfer` logs of a call that succeeded; lookalikes (a 4th topic, other data) are skipped. */
  private tokenTransfers(info: TronTxInfo): NormalisedTransfer[] {
    if (info.result === 'FAILED' || info.receipt?.result !== 'SUCCESS') return [];
    const out: NormalisedTransfer[] = [];
    (info.log ?? []).forEach((log, index) => {
      const asset = this.tokens.get(String(log.address).toLowerCase().replace(/^41(?=[0-9a-f]{40}$)/, ''));
      const topics = log.topics ?? [];
      if (!asset || topics.length !== 3 || topics[0]!.toLowerCase() !== TRON_TRANSFER_TOPIC || !/^[0-9a-fA-F]{64}$/.test(log.data ?? '')) return;
      if (!/^0{24}[0-9a-fA-F]{40}$/.test(topics[2]!)) return;
      const amount = BigInt('0x' + log.data);
      if (amount > MAX_AMOUNT) throw new NodeFault(`tron node: log ${info.id}:${index} has the impossible value ${amount}`);
      out.push({ asset, to: tronFromHex('0x' + topics[2]!.slice(24)), amount, txid: info.id, index });
    });
    return out;
  }

  /** The chain's prices: sun per energy unit and per bandwidth byte (getchainparameters). */
  async feeQuote(signal?: AbortSignal): Promise<FeeQuote> {
    const got = await this.node.post<{ chainParameter?: Array<{ key: string; value?: number }> }>('getchainparameters', {}, signal);
    const param = (key: string): bigint => {
      const value = got.chainParameter?.find((p) => p.key === key)?.value;
      if (!Number.isSafeInteger(value) || value! < 0) throw new NodeFault(`tron node: chain parameter ${key} is ${String(value)}`);
      return BigInt(value!);
    };
    return { kind: 'tron', sunPerEnergy: param('getEnergyFee'), sunPerBandwidth: param('getTransactionFee') };
  }

  /** Sends a signed transaction (hex of its protobuf); one the node already holds counts as sent. */
  async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    const txid = transactionId(rawHex);
    const got = await this.node.post<{ result?: boolean; code?: string; message?: string }>('broadcasthex', { transaction: rawHex }, signal);
    if (got.result === true || got.code === 'DUP_TRANSACTION_ERROR') return txid;
    throw new Error(`tron node broadcasthex: ${got.code ?? 'refused'} ${readable(got.message)}`.trim());
  }

  /**
   * TRX (getaccount's `balance`, absent for an account never activated or empty) and each TRC-20's
   * balanceOf (triggerconstantcontract) of every address, at the node's head: its HTTP API has no
   * batch and no past state, so the requests go 16 at a time.
   */
  async holdings(query: HoldingsQuery, signal?: AbortSignal): Promise<Map<string, bigint>> {
    const jobs = query.assets.flatMap((asset) => query.addresses.map((address) => ({ asset, address })));
    const out = new Map<string, bigint>(query.assets.map((a) => [a, 0n]));
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < jobs.length) {
        const { asset, address } = jobs[next++]!;
        const balance = await this.balanceOf(asset, address, signal);
        out.set(asset, out.get(asset)! + balance);
      }
    };
    await Promise.all(Array.from({ length: Math.min(HOLDINGS_PARALLEL, jobs.length) }, worker));
    return out;
  }

  private async balanceOf(asset: string, address: string, signal?: AbortSignal): Promise<bigint> {
    if (asset === 'native') {
      const account = await this.node.post<{ balance?: unknown }>('getaccount', { address, visible: true }, signal);
      if (account.balance === undefined) return 0n;
      if (!Number.isSafeInteger(account.balance) || (account.balance as number) < 0) throw new NodeFault(`tron node getaccount: the balance ${String(account.balance).slice(0, 40)}`);
      return BigInt(account.balance as number);
    }
    const got = await this.node.post<{ constant_result?: unknown[]; result?: { result?: boolean } }>(
      'triggerconstantcontract',
      { owner_address: address, contract_address: asset, function_selector: 'balanceOf(address)', parameter: tronToHex(address).slice(2).padStart(64, '0'), visible: true },
      signal,
    );
    const word = got.constant_result?.[0];
    if (got.result?.result !== true || typeof word !== 'string' || !/^[0-9a-fA-F]{64}$/.test(word)) throw new Error(`tron node triggerconstantcontract: no balanceOf answer for ${asset}`);
    const amount = BigInt('0x' + word);
    if (amount > MAX_AMOUNT) throw new NodeFault(`tron node: balanceOf ${asset} is the impossible value ${amount}`);
    return amount;
  }

  /**
   * Mined once the node has its info (`succeeded` false for a call that failed, fee burnt); in the
   * mempool while the node's pending pool holds it; otherwise unknown. (A Tron transaction has no
   * nonce that another could take: one that expired unmined can never confirm, which the payouts
   * that will send on Tron decide from its expiration.)
   */
  async sentStatus(sent: SentTransaction, signal?: AbortSignal): Promise<SentStatus> {
    const info = await this.node.post<TronTxInfo>('gettransactioninfobyid', { value: sent.txid }, signal);
    if (Number.isSafeInteger(info.blockNumber)) {
      const block = await this.header(info.blockNumber!, signal);
      return { state: 'mined', height: block.height, blockHash: block.hash, succeeded: info.result !== 'FAILED' };
    }
    const pending = await this.node.post<{ txID?: string }>('gettransactionfrompending', { value: sent.txid }, signal);
    return pending.txID === sent.txid ? { state: 'mempool' } : { state: 'unknown' };
  }
}

/** A block as the node must answer it: a 64-hex id and parent, at the height asked for. */
function checkedBlock(b: TronBlock, height: number | undefined): TronBlock {
  const raw = b?.block_header?.raw_data;
  if (!raw) throw new Error(`tron node has no block ${height ?? 'at its tip'}`);
  const number = raw.number ?? 0;
  if (!/^[0-9a-f]{64}$/.test(b.blockID) || !/^[0-9a-f]{64}$/.test(raw.parentHash) || (height !== undefined && number !== height))
    throw new NodeFault(`tron node: block ${height ?? number} is malformed`);
  return b;
}

const toHeader = (b: TronBlock): BlockHeader => ({ height: b.block_header.raw_data.number ?? 0, hash: b.blockID, parentHash: b.block_header.raw_data.parentHash });

/** Sun from a TransferContract's amount: a positive integer (java-tron's int64), else the node's fault. */
function sunOf(value: unknown, txid: string): bigint {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw new NodeFault(`tron node: transaction ${txid} has the amount ${String(value).slice(0, 40)}`);
  return BigInt(value);
}

/** `T...` from a node's hex address (41 ‖ 20 bytes). */
function addressOf(value: unknown, txid: string): string {
  if (typeof value !== 'string' || !/^41[0-9a-fA-F]{40}$/.test(value)) throw new NodeFault(`tron node: transaction ${txid} has the address ${String(value).slice(0, 50)}`);
  return tronFromHex('0x' + value.slice(2));
}

/** The txID of a signed transaction's protobuf: the sha256 of its raw_data (field 1). */
function transactionId(rawHex: string): string {
  const bytes = Buffer.from(rawHex, 'hex');
  if (bytes[0] !== 0x0a) throw new Error('not a Tron transaction');
  let length = 0;
  let shift = 0;
  let i = 1;
  for (; i < bytes.length && i < 6; i++) {
    length += (bytes[i]! & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(bytes[i]! & 0x80)) break;
  }
  const raw = bytes.subarray(i + 1, i + 1 + length);
  if (raw.length !== length) throw new Error('not a Tron transaction');
  return createHash('sha256').update(raw).digest('hex');
}

/** java-tron writes a refusal's message as hex of its text. */
const readable = (message: string | undefined): string =>
  message && /^([0-9a-f]{2})+$/i.test(message) ? Buffer.from(message, 'hex').toString('utf8').replace(/[^\x20-\x7e]/g, '').slice(0, 200) : (message ?? '').slice(0, 200);
