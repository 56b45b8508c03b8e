import { createHash } from 'node:crypto';
import type { ChainConfig } from '../../config/schema';
import {
  NodeFault,
  NodeUnavailable,
  type BlockHeader,
  type ChainNodeSet,
  type BlockRef,
  type ChainAdapter,
  type FeeQuote,
  type HoldingsQuery,
  type NormalisedBlock,
  type PlannedTransfer,
  type TransferEstimate,
  type NormalisedTransfer,
  type SentStatus,
  type SentTransaction,
  type BroadcastAnswer,
  TransactionRefused,
} from '../types';
import { tronFromHex, tronToHex } from './derive';
import { tronBroadcastAnswer, tronNodeTrouble } from './refusal';
import { readConsistently } from '../consistent-read';
import { decimalsOf, MAX_AMOUNT, TRANSFER_TOPIC, transferLog, type TransferLog } from '../token-transfer';
import { TronFullNode } from './full-node';
import { exactInteger } from './exact-json';

/** Tron's logs give topics without 0x. */
const TRON_TRANSFER_TOPIC = TRANSFER_TOPIC.slice(2);

/** Blocks one getblockbylimitnext may ask for (java-tron refuses more than 100). */
const MAX_RANGE = 100;
/** Balance requests in flight at once during a reconciliation (the HTTP API has no batch). */
const HOLDINGS_PARALLEL = 16;

/** The blockID of block 0 of each public network: what tells a node's network. */
export const TRON_GENESIS: Readonly<Record<string, string>> = {
  mainnet: '00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc',
  nile: '0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc',
  shasta: '0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e',
};

/**
 * Bandwidth bytes a transaction takes (its signed protobuf plus the 64 java-tron adds for its
 * result), rounded up: a TransferContract, and a TRC-20 `transfer` call with its fee_limit.
 */
const TRX_TRANSFER_BYTES = 270;
const TOKEN_TRANSFER_BYTES = 350;
/** fee_limit over the call's whole energy at the current price: the price or the recipient's storage may move before it is mined. */
const FEE_LIMIT_MARGIN_PERCENT = 20n;

interface AccountResource {
  freeNetUsed?: number;
  freeNetLimit?: number;
  NetUsed?: number;
  NetLimit?: number;
  EnergyUsed?: number;
  EnergyLimit?: number;
}

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

/** A mined transaction as the node tells it: where, what it burnt, whether it succeeded, and its token `Transfer` logs (internal calls' too). */
export interface TronTransactionInfo {
  height: number;
  fee: bigint;
  succeeded: boolean;
  energyFee: bigint;
  transfers: TransferLog[];
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
 * transactions, and the `Transfer` logs of the configured TRC-20 contracts from every contract call
 * that succeeded, whatever contract it called (a multisig, a smart-contract wallet, a batch or
 * forwarding contract moves the token by an internal call, whose log java-tron keeps in the same
 * transaction's info under the token's address); a failed or reverted call credits nothing, though
 * it is mined and its fee paid. Transaction infos are read only for blocks holding a contract call
 * that succeeded. Addresses leave in base58 `T...`. TRX moved by contract internals, TRC-10 assets
 * and tokens not configured are not seen (docs/chains.md).
 *
 * Requests per poll are kept few for hosted quotas (PRODUCT §15): the newest block comes whole with
 * the tip (`getnowblock`) and is not fetched again; the genesis check is skipped while the tip has
 * not moved (nothing new is read from the node then).
 */
/** The newest block a chain's tip read brought whole (see TronAdapter's constructor). */
export interface NewestBlock {
  block: TronBlock | null;
}

export class TronAdapter implements ChainAdapter {
  readonly chainId: string;
  private readonly node: Pick<TronFullNode, 'post'>;
  /** 20-byte hex of the contract, lower-case without 41 (a log's `address`) → the contract as configured. */
  private readonly tokens = new Map<string, string>();
  /** The genesis blockID the configured network has, and the network's name for messages. */
  private readonly genesis: string;
  private readonly network: string;
  /** The tip whose node was last found on the configured network. */
  private checkedTip: BlockRef | null = null;

  /**
   * `node`: the full node's HTTP API (the chain's endpoints, pooled); `nodes`: those endpoints, for
   * the chain core; `newest`: the node's newest block as the last `tip` read it whole, shared by
   * the adapters of one chain (the pool reads the tip through each endpoint's own), so that
   * `blocks` ending there takes it from here instead of asking for it again.
   */
  constructor(
    chain: ChainConfig,
    node?: Pick<TronFullNode, 'post'>,
    readonly nodes?: ChainNodeSet,
    private readonly newest: NewestBlock = { block: null },
  ) {
    this.chainId = chain.id;
    this.node = node ?? new TronFullNode(chain.full_node_url!, chain.watch.rpc_timeout_ms, chain.nodes?.endpoints[0]?.api_key ?? chain.api_key);
    for (const t of chain.tokens) this.tokens.set(tronToHex(t.contract).slice(2), t.contract);
    const own = chain.options.genesis_block_id as string | undefined;
    this.network = own ? 'genesis block ' + own : (chain.network ?? 'mainnet');
    this.genesis = own ?? TRON_GENESIS[chain.network ?? 'mainnet']!;
  }

  /**
   * The best block (kept whole for `blocks`), and block 0: a node of another network (at first
   * contact, after a restart on other settings, or behind a different node at the same URL, which a
   * reconnect does not announce) would credit its payments to this one's coins, so every poll that
   * finds a new tip checks it before anything of that tip is read. A tip that has not moved since
   * the last check needs none: nothing new is read from the node.
   */
  async tip(signal?: AbortSignal): Promise<BlockRef> {
    this.newest.block = null;
    const now = checkedBlock(await this.node.post<TronBlock>('getnowblock', {}, signal), undefined);
    const tip = toHeader(now);
    if (this.checkedTip?.hash !== tip.hash || this.checkedTip.height !== tip.height) {
      this.checkedTip = null;
      const first = await this.node.post<Partial<TronBlock>>('getblockbynum', { num: 0 }, signal);
      const genesis = typeof first.blockID === 'string' ? first.blockID.slice(0, 64) : 'missing';
      if (genesis !== this.genesis) throw new NodeFault(`tron node's genesis block is ${genesis}, the config says ${this.network}`);
      this.checkedTip = tip;
    }
    this.newest.block = now;
    const ms = now.block_header.raw_data.timestamp;
    return { ...tip, ...(typeof ms === 'number' ? { time: Math.floor(ms / 1000), timeMs: ms } : {}) };
  }

  async header(height: number, signal?: AbortSignal): Promise<BlockHeader> {
    return toHeader(checkedBlock(await this.node.post<TronBlock>('getblockbynum', { num: height }, signal), height));
  }

  async blocks(from: number, to: number, signal?: AbortSignal): Promise<NormalisedBlock[]> {
    // The newest block came whole with the tip: a range ending there reads one block less (none when it is the only one).
    let newest = this.newest.block?.block_header.raw_data.number === to ? this.newest.block : null;
    return readConsistently('tron node', from, to, async () => {
      const raw: TronBlock[] = [];
      const last = newest ? to - 1 : to;
      for (let start = from; start <= last; start += MAX_RANGE) {
        const end = Math.min(last + 1, start + MAX_RANGE);
        const got = await this.node.post<{ block?: TronBlock[] }>('getblockbylimitnext', { startNum: start, endNum: end }, signal);
        const blocks = got.block ?? [];
        blocks.forEach((b, i) => raw.push(checkedBlock(b, start + i)));
        if (blocks.length !== end - start) throw new Error(`tron node has no block ${start + blocks.length}`);
      }
      if (newest) raw.push(newest);
      // Read again from the node if this range changed while it was read.
      newest = null;
      return this.normalise(raw, signal);
    });
  }

  /** The blocks with their transfers; null when a block's transaction infos belong to another branch. */
  private async normalise(blocks: TronBlock[], signal?: AbortSignal): Promise<NormalisedBlock[] | null> {
    const out: NormalisedBlock[] = [];
    for (const b of blocks) {
      const block: NormalisedBlock = { ...toHeader(b), transfers: [], spends: [] };
      const calls = new Set<string>();
      for (const tx of b.transactions ?? []) {
        const contract = tx.raw_data?.contract?.[0];
        // Every transaction spends its owner's TRX (bandwidth, energy, fees), a failed call too: the wallet's own are tracked by it.
        const owner = contract?.parameter?.value?.owner_address;
        if (typeof owner === 'string' && /^41[0-9a-fA-F]{40}$/.test(owner)) block.spends!.push({ txid: tx.txID, from: tronFromHex('0x' + owner.slice(2)) });
        if (!contract || tx.ret?.[0]?.contractRet !== 'SUCCESS') continue;
        const v = contract.parameter.value;
        if (contract.type === 'TransferContract') {
          block.transfers.push({ asset: 'native', to: addressOf(v.to_address, tx.txID), amount: sunOf(v.amount, tx.txID), txid: tx.txID, index: 0 });
        } else if (contract.type === 'TriggerSmartContract') {
          // Whatever contract it calls: the token may move by an internal call (PRODUCT §15).
          calls.add(tx.txID);
        }
      }
      if (calls.size > 0) {
        const infos = await this.node.post<TronTxInfo[] | Record<string, never>>('gettransactioninfobyblocknum', { num: block.height }, signal);
        const list = Array.isArray(infos) ? infos : [];
        const ids = new Set(list.map((i) => i.id));
        if (list.some((i) => i.blockNumber !== block.height) || [...calls].some((id) => !ids.has(id))) return null;
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
      const asset = this.tokens.get(
        String(log.address)
          .toLowerCase()
          .replace(/^41(?=[0-9a-f]{40}$)/, ''),
      );
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
    const params = await this.chainParameters(signal);
    return { kind: 'tron', sunPerEnergy: params.getEnergyFee, sunPerBandwidth: params.getTransactionFee };
  }

  /**
   * What sending `t` will take, from the node: a token transfer's energy from its dry run
   * (`triggerconstantcontract` of `transfer(to, amount)` by the sender, so the recipient's storage
   * counts: about twice the energy to an address holding none of the token yet); a TRX payment to
   * an address without an account pays its creation. The sender's available energy and bandwidth
   * (staked, delegated to it, free) go first; the rest is what the chain burns. A call the dry run
   * says would fail (the sender short of tokens) is refused here.
   */
  async estimateTransfer(t: PlannedTransfer, signal?: AbortSignal): Promise<TransferEstimate> {
    const from = '41' + tronToHex(t.from).slice(2);
    const to = '41' + tronToHex(t.to).slice(2);
    const native = t.asset === 'native';
    if (!native && !this.tokens.has(tronToHex(t.asset).slice(2))) throw new Error(`tron: ${t.asset} is not a configured token`);
    const [params, sender, recipient, call] = await Promise.all([
      this.chainParameters(signal),
      this.node.post<AccountResource>('getaccountresource', { address: from }, signal),
      native ? this.node.post<{ address?: string }>('getaccount', { address: to }, signal) : null,
      native
        ? null
        : this.node.post<{
            result?: { result?: boolean; message?: string; code?: string };
            energy_used?: number;
            transaction?: { ret?: Array<{ ret?: string }> };
          }>(
            'triggerconstantcontract',
            {
              owner_address: from,
              contract_address: '41' + tronToHex(t.asset).slice(2),
              function_selector: 'transfer(address,uint256)',
              parameter: to.slice(2).padStart(64, '0') + t.amount.toString(16).padStart(64, '0'),
            },
            signal,
          ),
    ]);
    let energy = 0;
    if (call) {
      const failed = call.result?.result !== true || call.result.message !== undefined || call.transaction?.ret?.[0]?.ret === 'FAILED';
      if (failed)
        throw new Error(`tron node triggerconstantcontract: the transfer would fail ${readable(call.result?.message) || call.result?.code || ''}`.trim());
      if (!Number.isSafeInteger(call.energy_used) || call.energy_used! <= 0)
        throw new NodeFault(`tron node triggerconstantcontract: energy_used is ${String(call.energy_used)}`);
      energy = call.energy_used!;
    }
    const bandwidth = native ? TRX_TRANSFER_BYTES : TOKEN_TRANSFER_BYTES;
    const left = (limit?: number, used?: number) => Math.max(0, (limit ?? 0) - (used ?? 0));
    const stakedBandwidth = left(sender.NetLimit, sender.NetUsed);
    const creates = recipient !== null && recipient.address === undefined;
    const activationSun = creates ? params.getCreateNewAccountFeeInSystemContract + (stakedBandwidth >= bandwidth ? 0n : params.getCreateAccountFee) : 0n;
    const bandwidthBurn =
      creates || stakedBandwidth >= bandwidth || left(sender.freeNetLimit, sender.freeNetUsed) >= bandwidth ? 0n : BigInt(bandwidth) * params.getTransactionFee;
    const energyBurn = BigInt(Math.max(0, energy - left(sender.EnergyLimit, sender.EnergyUsed))) * params.getEnergyFee;
    const feeLimit = native ? 0n : (BigInt(energy) * params.getEnergyFee * (100n + FEE_LIMIT_MARGIN_PERCENT) + 99n) / 100n;
    return { kind: 'tron', energy, bandwidth, activationSun, burnSun: activationSun + bandwidthBurn + energyBurn, feeLimit };
  }

  private async chainParameters(
    signal?: AbortSignal,
  ): Promise<Record<'getEnergyFee' | 'getTransactionFee' | 'getCreateAccountFee' | 'getCreateNewAccountFeeInSystemContract', bigint>> {
    const got = await this.node.post<{ chainParameter?: Array<{ key: string; value?: number }> }>('getchainparameters', {}, signal);
    const param = (key: string): bigint => {
      const value = got.chainParameter?.find((p) => p.key === key)?.value;
      if (!Number.isSafeInteger(value) || value! < 0) throw new NodeFault(`tron node: chain parameter ${key} is ${String(value)}`);
      return BigInt(value!);
    };
    return {
      getEnergyFee: param('getEnergyFee'),
      getTransactionFee: param('getTransactionFee'),
      getCreateAccountFee: param('getCreateAccountFee'),
      getCreateNewAccountFeeInSystemContract: param('getCreateNewAccountFeeInSystemContract'),
    };
  }

  /** Sends a signed transaction (hex of its protobuf); one the node already holds counts as sent. */
  async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    const txid = transactionId(rawHex);
    const got = await this.node.post<{ result?: boolean; code?: string; message?: string }>('broadcasthex', { transaction: rawHex }, signal);
    const answer = tronBroadcastAnswer(got);
    if (answer === 'known') return txid;
    const reason = `tron node broadcasthex: ${got.code ?? 'refused'} ${readable(got.message)}`.trim();
    if (tronNodeTrouble(got.code)) throw new NodeUnavailable(reason, null, got.code === 'SERVER_BUSY');
    throw answer === 'refused' ? new TransactionRefused(reason) : new Error(reason);
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
      const balance = exactInteger(account.balance);
      if (balance === null) throw new NodeFault(`tron node getaccount: the balance ${String(account.balance).slice(0, 40)}`);
      return balance;
    }
    const got = await this.node.post<{ constant_result?: unknown[]; result?: { result?: boolean } }>(
      'triggerconstantcontract',
      {
        owner_address: address,
        contract_address: asset,
        function_selector: 'balanceOf(address)',
        parameter: tronToHex(address).slice(2).padStart(64, '0'),
        visible: true,
      },
      signal,
    );
    const word = got.constant_result?.[0];
    if (got.result?.result !== true || typeof word !== 'string' || !/^[0-9a-fA-F]{64}$/.test(word))
      throw new Error(`tron node triggerconstantcontract: no balanceOf answer for ${asset}`);
    const amount = BigInt('0x' + word);
    if (amount > MAX_AMOUNT) throw new NodeFault(`tron node: balanceOf ${asset} is the impossible value ${amount}`);
    return amount;
  }

  /** A payable Tron address: base58check `T...` of 0x41 and 20 bytes. */
  payable(address: string): boolean {
    if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(address)) return false;
    try {
      tronToHex(address);
      return true;
    } catch {
      return false;
    }
  }

  /** One sun: Tron has no dust rule for a TRX or TRC-20 payment. */
  readonly minimumPayment = 1n;

  /** The head block's id, height and time: what a transaction signed now references, and what its expiration counts from. */
  async head(signal?: AbortSignal): Promise<{ height: number; blockId: string; timestamp: number }> {
    const b = checkedBlock(await this.node.post<TronBlock>('getnowblock', {}, signal), undefined);
    return { height: b.block_header.raw_data.number ?? 0, blockId: b.blockID, timestamp: b.block_header.raw_data.timestamp ?? 0 };
  }

  /** The time (ms) of the block at `height` on the node's best chain. */
  async blockTime(height: number, signal?: AbortSignal): Promise<number> {
    return checkedBlock(await this.node.post<TronBlock>('getblockbynum', { num: height }, signal), height).block_header.raw_data.timestamp ?? 0;
  }

  /** The chain's prices and fees (sun), from getchainparameters. */
  prices(signal?: AbortSignal) {
    return this.chainParameters(signal);
  }

  /**
   * An address's account: whether it exists (was activated), its TRX, what it has staked for
   * energy in all and how much of that it has delegated to others (sun). java-tron moves a
   * delegation out of `frozenV2` into `delegated_frozenV2_balance_for_energy`: the stake is their sum.
   */
  async account(address: string, signal?: AbortSignal): Promise<{ exists: boolean; balance: bigint; stakedEnergy: bigint; delegatedEnergy: bigint }> {
    const a = await this.node.post<{
      address?: string;
      balance?: number;
      frozenV2?: Array<{ type?: string; amount?: number }>;
      account_resource?: { delegated_frozenV2_balance_for_energy?: number };
    }>('getaccount', { address: tronHexAddressOf(address) }, signal);
    const sun = (v: unknown): bigint => exactInteger(v) ?? 0n;
    return {
      exists: a.address !== undefined,
      balance: sun(a.balance),
      stakedEnergy: sun(a.frozenV2?.find((f) => f.type === 'ENERGY')?.amount) + sun(a.account_resource?.delegated_frozenV2_balance_for_energy),
      delegatedEnergy: sun(a.account_resource?.delegated_frozenV2_balance_for_energy),
    };
  }

  /**
   * What an address can spend now without burning TRX: energy and staked bandwidth (its own stake
   * and what is delegated to it, less what it used and has not recovered), free bandwidth; and the
   * network's energy per staked TRX (TotalEnergyLimit over TotalEnergyWeight).
   */
  async resources(address: string, signal?: AbortSignal): Promise<{ energy: number; bandwidth: number; freeBandwidth: number; energyPerTrx: number }> {
    const r = await this.node.post<AccountResource & { TotalEnergyLimit?: number; TotalEnergyWeight?: number }>(
      'getaccountresource',
      { address: tronHexAddressOf(address) },
      signal,
    );
    const left = (limit?: number, used?: number) => Math.max(0, (limit ?? 0) - (used ?? 0));
    return {
      energy: left(r.EnergyLimit, r.EnergyUsed),
      bandwidth: left(r.NetLimit, r.NetUsed),
      freeBandwidth: left(r.freeNetLimit, r.freeNetUsed),
      energyPerTrx: r.TotalEnergyWeight ? (r.TotalEnergyLimit ?? 0) / r.TotalEnergyWeight : 0,
    };
  }

  /** The energy `from`'s `transfer(to, amount)` of the token would use now (the node's dry run); null when the call would fail. */
  async transferEnergy(from: string, to: string, token: string, amount: bigint, signal?: AbortSignal): Promise<number | null> {
    try {
      return (await this.estimateTransfer({ from, to, asset: token, amount }, signal)).energy;
    } catch (err) {
      if (err instanceof NodeFault || !/would fail/.test(String(err))) throw err;
      return null;
    }
  }

  /** What the TRC-20 contract answers to `decimals()` (a constant call on the head state); null when no such number. */
  async tokenDecimals(contract: string, signal?: AbortSignal): Promise<number | null> {
    const hex = '41' + tronToHex(contract).slice(2);
    const call = await this.node.post<{ constant_result?: string[] }>(
      'triggerconstantcontract',
      { owner_address: hex, contract_address: hex, function_selector: 'decimals()', parameter: '' },
      signal,
    );
    return decimalsOf(call.constant_result?.[0] ?? '');
  }

  /** A mined transaction's block, the sun it burnt, and whether it did what it was sent for; null when not mined on the node's chain. */
  async transactionInfo(txid: string, signal?: AbortSignal): Promise<TronTransactionInfo | null> {
    const info = await this.node.post<TronTxInfo & { fee?: number; receipt?: { result?: string; energy_fee?: number } }>(
      'gettransactioninfobyid',
      { value: txid },
      signal,
    );
    if (!Number.isSafeInteger(info.blockNumber)) return null;
    const sun = (v: unknown): bigint => exactInteger(v) ?? 0n;
    const succeeded = info.result !== 'FAILED';
    const transfers = succeeded ? (info.log ?? []).flatMap((log) => transferLog(String(log.address), log.topics ?? [], log.data ?? '') ?? []) : [];
    return { height: info.blockNumber!, fee: sun(info.fee), succeeded, energyFee: sun(info.receipt?.energy_fee), transfers };
  }

  /** Whether the node's pending pool holds `txid`. */
  async pending(txid: string, signal?: AbortSignal): Promise<boolean> {
    return (await this.node.post<{ txID?: string }>('gettransactionfrompending', { value: txid }, signal)).txID === txid;
  }

  /** Like `broadcast`, with java-tron's refusal code kept: `TRANSACTION_EXPIRATION_ERROR` says it can never be mined. */
  async send(rawHex: string, signal?: AbortSignal): Promise<{ answer: BroadcastAnswer; code: string; message: string }> {
    const got = await this.node.post<{ result?: boolean; code?: string; message?: string }>('broadcasthex', { transaction: rawHex }, signal);
    return { answer: tronBroadcastAnswer(got), code: got.code ?? (got.result === true ? 'SUCCESS' : 'OTHER_ERROR'), message: readable(got.message) };
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

const toHeader = (b: TronBlock): BlockHeader => ({
  height: b.block_header.raw_data.number ?? 0,
  hash: b.blockID,
  parentHash: b.block_header.raw_data.parentHash,
});

/** Sun from a TransferContract's amount: a positive integer (java-tron's int64, read exactly at any size), else the node's fault. */
function sunOf(value: unknown, txid: string): bigint {
  const sun = exactInteger(value);
  if (sun === null || sun === 0n || sun > MAX_AMOUNT) throw new NodeFault(`tron node: transaction ${txid} has the amount ${String(value).slice(0, 40)}`);
  return sun;
}

/** 41 ‖ 20 bytes of a `T...` address, as the node's requests take it. */
const tronHexAddressOf = (address: string): string => '41' + tronToHex(address).slice(2);

/** `T...` from a node's hex address (41 ‖ 20 bytes). */
function addressOf(value: unknown, txid: string): string {
  if (typeof value !== 'string' || !/^41[0-9a-fA-F]{40}$/.test(value))
    throw new NodeFault(`tron node: transaction ${txid} has the address ${String(value).slice(0, 50)}`);
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
  message && /^([0-9a-f]{2})+$/i.test(message)
    ? Buffer.from(message, 'hex')
        .toString('utf8')
        .replace(/[^\x20-\x7e]/g, '')
        .slice(0, 200)
    : (message ?? '').slice(0, 200);
