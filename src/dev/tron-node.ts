/**
 * A stand-in for a Tron full node's HTTP API (no java-tron installs here), on 127.0.0.1: it keeps a
 * chain of blocks in java-tron's JSON shapes and answers the endpoints Coinkeep and tronweb read.
 * Its transactions are real Tron encodings (raw_data protobuf built by tronweb, txID = its sha256,
 * secp256k1 signatures of the owner). What it runs, by contract type:
 *
 * - TransferContract: TRX between accounts; paying a never-used address creates its account, which
 *   costs the sender 1 TRX (getCreateNewAccountFeeInSystemContract) plus 0.1 TRX of bandwidth
 *   (getCreateAccountFee) unless its staked bandwidth covers the bytes.
 * - TriggerSmartContract: `transfer(address,uint256)` of one TRC-20 token, which keeps balances and
 *   writes `Transfer` logs. It takes ENERGY_TO_HOLDER energy, about twice (ENERGY_TO_NEW_HOLDER) when
 *   the recipient holds none of the token yet; energy the caller has (staked or delegated to it)
 *   goes first, the rest is burnt at getEnergyFee sun a unit, within the fee_limit and the balance,
 *   else the call fails OUT_OF_ENERGY (mined, fee burnt, nothing moved). A call of another function
 *   or contract, one the test asked to fail or a sender short of tokens reverts (receipt REVERT).
 * - Stake 2.0: FreezeBalanceV2, UnfreezeBalanceV2 (the TRX waits 14 days, then
 *   WithdrawExpireUnfreeze), DelegateResource (with lock and lock_period), UnDelegateResource.
 *   Resource limits are the staked TRX's share of the network's (TotalEnergyLimit over
 *   TotalEnergyWeight, which counts a fixed rest-of-network stake plus this chain's), and usage
 *   recovers linearly over 24 hours (28,800 slots of 3 s) of block time.
 * - Bandwidth for every transaction: its bytes (signed protobuf + 64) from the owner's staked
 *   bandwidth, else its 600 free bytes a day, else burnt at getTransactionFee sun a byte.
 *
 * A broadcast transaction is checked as a node checks it before it spreads: its signature recovers
 * the owner address, its expiration is after the head block and within 24 hours, its reference block
 * (TaPoS) is on this chain, its contract validates against the state, the owner can pay its
 * bandwidth. It waits in the pending pool until the next mined block (checked again there; dropped
 * if it no longer validates).
 *
 * A second contract, the forwarder (`forwarder`), stands for the multisig wallets, relayers and batch
 * contracts that pay in the token by an internal call: its `forward(address,uint256)` moves the
 * caller's tokens to `to` through the token, so the mined transaction calls the forwarder while its
 * info holds the token's `Transfer` log under the token's address (java-tron keeps internal calls'
 * logs in the transaction's info), an `internal_transactions` entry, and a `Transfer`-shaped event
 * of the forwarder's own (under its address: not the token's).
 *
 * Amounts are int64 as in java-tron: a TRX transfer above 2^53 sun is served as the exact numeral
 * (JSON.parse would round it), its protobuf carrying the exact varint.
 *
 * Test hooks: `pay` (from the funded payer into the next block; `via: 'forwarder'` for the token), `mine`, `busy` (broadcasts answered with a node-trouble code), `holdPending` (blocks
 * leave the pool waiting; a block past a waiting transaction's expiration drops it, as every block
 * does), `reorg` (drop blocks; the next mined ones form the new branch), `skipTime` (block time passes: resources recover, locks and
 * unfreezes expire), `requireApiKey`, `misbehave` (the token's `transfer` returns false, or takes a
 * fee), `lite` (a Lite FullNode: history queries closed as java-tron's LiteFnQueryHttpFilter answers
 * them), `throttle` (a rate limiter's answers: java-tron's "lack of computing resources", or a hosted
 * node's HTTP 429 with Retry-After), `stop`; over HTTP, `POST /dev/mine {blocks}` for a process
 * that does not hold the object (`coinkeep dev pay`). `save`/`load` keep the chain in a file.
 *
 * Not emulated: witnesses, votes and solidification (every block is final only by the test's word:
 * `/walletsolidity/*` answers as `/wallet/*`), TRC-10 assets, contracts other than the one token
 * and the forwarder (no deployment, no other calls), TRX moved by internal calls, dynamic energy (a contract's energy
 * penalty), the usage an undelegation hands back to its owner, multi-signature permissions, memos.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SigningKey, keccak256 } from 'ethers';
import { TronWeb, utils } from 'tronweb';
import { writePrivateFile } from '../db/seal';

const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const TRANSFER_SELECTOR = 'a9059cbb';
/** The forwarder's `forward(address,uint256)`: the caller's tokens to `to`, through the token. */
const FORWARD_SELECTOR = keccak256(Buffer.from('forward(address,uint256)')).slice(2, 10);
/** Paths java-tron's Lite FullNode closes unless node.openHistoryQueryWhenLiteFN = true (those the stand-in serves). */
const LITE_CLOSED_PATHS = new Set([
  '/wallet/getblockbynum',
  '/wallet/getblockbylimitnext',
  '/wallet/gettransactioninfobyblocknum',
  '/wallet/gettransactioninfobyid',
  '/wallet/gettransactionbyid',
]);
/** What it writes for them, HTTP 200. */
const LITE_CLOSED_TEXT = 'this API is closed because this node is a lite fullnode';
const BALANCE_OF_SELECTOR = '70a08231';
const DECIMALS_SELECTOR = '313ce567';
/** The stand-in token's decimals (a USDT's). */
export const TOKEN_DECIMALS = 6;
/** Energy a TRC-20 transfer takes: about twice as much to an address that holds none of the token yet. */
export const ENERGY_TO_HOLDER = 14_650;
export const ENERGY_TO_NEW_HOLDER = 29_650;
/** Where a token taking a fee on transfer keeps it (`misbehave('fee')`): 20 bytes, hex. */
export const TOKEN_FEE_COLLECTOR = '0000000000000000000000000000000000000fee';
/** Energy a reverted call burns, and a constant `balanceOf`. */
const ENERGY_REVERT = 1_000;
const ENERGY_BALANCE_OF = 700;
/** The chain's prices (getchainparameters). */
export const SUN_PER_ENERGY = 420;
export const SUN_PER_BANDWIDTH = 1000;
/** Creating an account by a TRX transfer: the fee, and the bandwidth burnt when staked bandwidth does not cover it. */
export const CREATE_ACCOUNT_FEE = 1_000_000;
export const CREATE_ACCOUNT_BANDWIDTH_FEE = 100_000;
export const FREE_NET_LIMIT = 600;
const TOTAL_NET_LIMIT = 43_200_000_000;
const TOTAL_ENERGY_LIMIT = 180_000_000_000;
/** TRX staked for each resource by the rest of the network (so 1 TRX staked gives 1.5 bandwidth, 10 energy). */
const BASE_NET_WEIGHT = 28_800_000_000;
const BASE_ENERGY_WEIGHT = 18_000_000_000;
const TRX = 1_000_000;
const BLOCK_MS = 3000;
/** Resource usage recovers over this many slots (24 hours). */
const WINDOW = 28_800;
const UNFREEZE_DELAY_MS = 14 * 86_400_000;
/** A delegation's lock without a lock_period: 3 days of blocks. */
const DEFAULT_LOCK_BLOCKS = 86_400;
/** Bytes java-tron adds to a transaction's size for the result it stores with it. */
const RESULT_BYTES = 64;
const MAX_EXPIRATION_MS = 86_400_000;
/** Blocks kept restorable for a reorg. */
const SNAPSHOTS = 128;

export type Resource = 'BANDWIDTH' | 'ENERGY';

export interface TronTx {
  txID: string;
  raw_data: {
    contract: Array<{ parameter: { value: Record<string, unknown>; type_url: string }; type: string }>;
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    timestamp?: number;
    fee_limit?: number;
  };
  raw_data_hex: string;
  signature: string[];
  ret: Array<{ contractRet: string }>;
}

export interface TronTxInfo {
  id: string;
  fee?: number;
  blockNumber: number;
  blockTimeStamp: number;
  contractResult: string[];
  contract_address?: string;
  receipt: { net_usage?: number; net_fee?: number; energy_usage?: number; energy_usage_total?: number; energy_fee?: number; result?: string };
  log?: Array<{ address: string; topics: string[]; data: string }>;
  result?: 'FAILED';
  resMessage?: string;
  unfreeze_amount?: number;
  withdraw_expire_amount?: number;
  internal_transactions?: Array<{
    hash: string;
    caller_address: string;
    transferTo_address: string;
    callValueInfo: Array<Record<string, unknown>>;
    note: string;
  }>;
}

export interface TronBlock {
  blockID: string;
  block_header: {
    raw_data: { number: number; txTrieRoot: string; witness_address: string; parentHash: string; version: number; timestamp: number };
    witness_signature: string;
  };
  transactions?: TronTx[];
}

interface Usage {
  used: number;
  /** The slot of the last consumption. */
  slot: number;
}

interface Account {
  balance: bigint;
  createTime: number;
  /** Own stake per resource, delegated part included. */
  frozen: Record<Resource, bigint>;
  delegatedOut: Record<Resource, bigint>;
  acquired: Record<Resource, bigint>;
  unfrozen: Array<{ resource: Resource; amount: bigint; expire: number }>;
  net: Usage;
  freeNet: Usage;
  energy: Usage;
}

interface Delegation {
  from: string;
  to: string;
  resource: Resource;
  balance: bigint;
  /** 0 for the unlocked record; else when its lock ends (ms). */
  lockUntil: number;
}

/** Everything a block changes: restored on a reorg, written by `save`. */
interface State {
  accounts: Map<string, Account>;
  tokens: Map<string, bigint>;
  delegations: Delegation[];
}

interface Pending {
  tx: TronTx;
  /** The test asked this token call to fail. */
  revert: boolean;
  /** Bytes of the signed transaction (its bandwidth before RESULT_BYTES). */
  size: number;
}

/** A contract that does not validate, in java-tron's words. */
class Invalid extends Error {
  constructor(
    message: string,
    readonly code = 'CONTRACT_VALIDATE_ERROR',
  ) {
    super(message);
  }
}

/** A refusal of broadcasthex, in java-tron's shape (the message is hex of its text). */
const refusal = (code: string, message: string, txid?: string) => ({
  result: false,
  code,
  ...(txid ? { txid } : {}),
  message: Buffer.from(message).toString('hex'),
});

/** 20-byte hex (no 0x, no 41, lower-case) of a `T...` address or a 41-prefixed hex one. */
export function hex20(address: string): string {
  if (/^41[0-9a-fA-F]{40}$/.test(address)) return address.slice(2).toLowerCase();
  if (/^0x[0-9a-fA-F]{40}$/.test(address)) return address.slice(2).toLowerCase();
  if (!TronWeb.isAddress(address)) throw new Invalid(`Invalid address ${address.slice(0, 50)}`);
  return TronWeb.address.toHex(address).slice(2).toLowerCase();
}
const word = (hex: string): string => hex.padStart(64, '0');
const sha256 = (hex: string): string => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');
const RESOURCES: Resource[] = ['BANDWIDTH', 'ENERGY'];
const perResource = (): Record<Resource, bigint> => ({ BANDWIDTH: 0n, ENERGY: 0n });

/** Contract types by their protobuf enum value (Transaction.Contract.ContractType). */
const CONTRACT_TYPES: Record<number, string> = {
  1: 'TransferContract',
  31: 'TriggerSmartContract',
  54: 'FreezeBalanceV2Contract',
  55: 'UnfreezeBalanceV2Contract',
  56: 'WithdrawExpireUnfreezeContract',
  57: 'DelegateResourceContract',
  58: 'UnDelegateResourceContract',
};

export interface TronNodeOptions {
  /** The payer's private key (hex); random unless given (the sandbox keeps its own). */
  payerKey?: string;
  /** The token contract's address (`T...`); random unless given. */
  usdt?: string;
  /** The forwarder contract's address (`T...`); random unless given. */
  forwarder?: string;
}

export class TronNode {
  /** The payer's key and address: it holds TRX and the token's whole supply. */
  readonly payerKey: string;
  readonly payer: string;
  /** The token contract (`T...`). */
  readonly usdt: string;
  /** The forwarder contract (`T...`): its calls move the token by an internal call. */
  readonly forwarder: string;
  readonly blocks: TronBlock[] = [];
  private readonly infos = new Map<string, TronTxInfo[]>();
  private readonly known = new Map<string, { tx: TronTx; info: TronTxInfo }>();
  private state: State = { accounts: new Map(), tokens: new Map(), delegations: [] };
  /** The state before block n, for the last SNAPSHOTS blocks. */
  private readonly snapshots = new Map<number, State>();
  private pending: Pending[] = [];
  private holding = false;
  private busyCode: string | null = null;
  private branch = 0;
  /** The timer of `produce`: blocks made at wall-clock slots. */
  private producer: NodeJS.Timeout | null = null;
  /** Block time skipped by `skipTime`, added to the next block's timestamp. */
  private skipped = 0;
  private apiKey: string | null = null;
  private quirk: 'none' | 'false' | 'fee' = 'none';
  private liteNode = false;
  private throttled: 'lack-of-resources' | 'http429' | null = null;
  /** Every request's path, in order: what the client asked for. */
  readonly requests: Array<{ path: string; apiKey: string | undefined }> = [];
  private server: http.Server | null = null;
  /** Called after each block mined over `/dev/mine` (the sandbox saves the chain). */
  onMinedOverHttp: (() => void) | null = null;
  port = 0;

  constructor(opts: TronNodeOptions = {}, restored?: SavedChain) {
    this.payerKey = opts.payerKey ?? randomBytes(32).toString('hex');
    this.payer = TronWeb.address.fromPrivateKey(this.payerKey) as string;
    this.usdt = opts.usdt ?? (TronWeb.address.fromHex('41' + randomBytes(20).toString('hex')) as string);
    this.forwarder = opts.forwarder ?? (TronWeb.address.fromHex('41' + randomBytes(20).toString('hex')) as string);
    if (restored) {
      this.blocks.push(...restored.blocks);
      for (const [id, infos] of restored.infos) this.infos.set(id, infos);
      for (const infos of restored.infos.values())
        for (const info of infos) {
          const block = this.blocks[info.blockNumber]!;
          const tx = block.transactions!.find((t) => t.txID === info.id)!;
          this.known.set(info.id, { tx, info });
        }
      this.state = restored.state;
      this.branch = restored.branch;
      return;
    }
    const genesisTime = 1_700_000_000_000;
    // 100 billion TRX, about mainnet's supply: enough for a transfer above 2^53 sun.
    this.state.accounts.set(hex20(this.payer), newAccount(10n ** 17n, genesisTime));
    this.state.tokens.set(hex20(this.payer), 10n ** 15n);
    this.mineBlock([]);
  }

  static async start(opts: TronNodeOptions = {}): Promise<TronNode> {
    const node = new TronNode(opts);
    await node.listen();
    return node;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get height(): number {
    return this.blocks.length - 1;
  }

  /** The genesis block's id: what identifies this chain (a chain's `options.genesis_block_id`). */
  get genesisId(): string {
    return this.blocks[0]!.blockID;
  }

  /** From now on every request must carry this `TRON-PRO-API-KEY` (a hosted node's). */
  requireApiKey(key: string): void {
    this.apiKey = key;
  }

  /**
   * From now on the token misbehaves in the calls mined: `false`, its `transfer` returns false and
   * moves nothing (the call succeeds); `fee`, it keeps 1% of each transfer at TOKEN_FEE_COLLECTOR;
   * `none`, it behaves again.
   */
  misbehave(quirk: 'none' | 'false' | 'fee'): void {
    this.quirk = quirk;
  }

  /**
   * While on, the node is a Lite FullNode without node.openHistoryQueryWhenLiteFN: blocks by number
   * and transaction infos answer java-tron's plain-text line (HTTP 200), as LiteFnQueryHttpFilter does.
   */
  lite(on: boolean): void {
    this.liteNode = on;
  }

  /**
   * While set, every request meets a rate limiter: `lack-of-resources`, java-tron's own (HTTP 200,
   * `Error`); `http429`, a hosted node's over its quota (HTTP 429, a JSON body, Retry-After: 1).
   */
  throttle(kind: 'lack-of-resources' | 'http429' | null): void {
    this.throttled = kind;
  }

  async listen(port = 0): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/walletsolidity\//, '/wallet/');
        const key = req.headers['tron-pro-api-key'] as string | undefined;
        this.requests.push({ path, apiKey: key });
        if (this.apiKey !== null && key !== this.apiKey) return send(res, 401, { Error: 'ApiKey not exists' });
        if (this.throttled === 'http429')
          return send(res, 429, { Error: 'request rate exceeded the allowed_rps(15), and the query server will be suspended for 1s' }, { 'Retry-After': '1' });
        if (this.throttled === 'lack-of-resources') return send(res, 200, { Error: 'lack of computing resources' });
        if (this.liteNode && LITE_CLOSED_PATHS.has(path)) {
          res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
          return void res.end(LITE_CLOSED_TEXT);
        }
        let body: Record<string, unknown> = {};
        try {
          const text = Buffer.concat(chunks).toString();
          if (text) body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          return send(res, 200, { Error: 'class com.alibaba.fastjson.JSONException : invalid json request' });
        }
        let answer: unknown;
        try {
          answer = this.answer(path, body);
        } catch (err) {
          answer = { Error: `class org.tron.core.exception.ContractValidateException : ${(err as Error).message}` };
        }
        send(res, 200, answer);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /**
   * Makes blocks as a live network does: one at each wall-clock slot of `blockMs` (a multiple of it
   * since 1970), timestamped with the slot's time, until stop() or produce(0). `onBlock` is told
   * each block's height and timestamp (ms) as it is made. Blocks made by `mine` meanwhile are
   * timestamped as usual.
   */
  produce(blockMs: number, onBlock?: (height: number, timestampMs: number) => void): void {
    if (this.producer) clearTimeout(this.producer);
    this.producer = null;
    if (blockMs <= 0) return;
    const next = () => {
      const slot = (Math.floor(Date.now() / blockMs) + 1) * blockMs;
      this.producer = setTimeout(() => {
        const parent = this.blocks.at(-1)!.block_header.raw_data.timestamp;
        this.skipped = slot - parent - BLOCK_MS;
        this.mine(1);
        onBlock?.(this.height, slot);
        next();
      }, slot - Date.now());
      this.producer.unref();
    };
    next();
  }

  async stop(): Promise<void> {
    this.produce(0);
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The token balance of `address` in base units. */
  tokenBalance(address: string): bigint {
    return this.state.tokens.get(hex20(address)) ?? 0n;
  }

  /** TRX of `address` in sun. */
  trxBalance(address: string): bigint {
    return this.state.accounts.get(hex20(address))?.balance ?? 0n;
  }

  /** The ids of the transactions waiting in the pending pool. */
  pendingTxids(): string[] {
    return this.pending.map((p) => p.tx.txID);
  }

  /** Whether `address` has an account on chain (activated: it was paid TRX once). */
  activated(address: string): boolean {
    return this.state.accounts.has(hex20(address));
  }

  /**
   * A signed payment from the payer into the next mined block; returns its txID. `asset` is
   * `native` (TRX, a TransferContract) or the token (a TriggerSmartContract calling transfer); a
   * token call reverts when `revert` is set or the payer lacks the amount.
   */
  pay(to: string, asset: 'native' | string, amount: bigint, opts: { revert?: boolean; via?: 'forwarder' } = {}): string {
    const owner = '41' + hex20(this.payer);
    const toHex = '41' + hex20(to);
    const native = asset === 'native';
    if (opts.via && (native || hex20(asset) !== hex20(this.usdt))) throw new Error('the forwarder moves the token only');
    const value: Record<string, unknown> = native
      ? { amount: amount <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(amount) : amount, owner_address: owner, to_address: toHex }
      : opts.via === 'forwarder'
        ? { data: FORWARD_SELECTOR + word(hex20(to)) + word(amount.toString(16)), owner_address: owner, contract_address: '41' + hex20(this.forwarder) }
        : { data: TRANSFER_SELECTOR + word(hex20(to)) + word(amount.toString(16)), owner_address: owner, contract_address: '41' + hex20(asset) };
    const type = native ? 'TransferContract' : 'TriggerSmartContract';
    const raw = this.unsigned(type, value, native ? undefined : 100_000_000, this.pending.length);
    const signed = signTronTransaction(raw, this.payerKey);
    const tx: TronTx = {
      txID: signed.txID,
      raw_data: raw as TronTx['raw_data'],
      raw_data_hex: signed.rawHex,
      signature: [signed.signature],
      ret: [{ contractRet: 'SUCCESS' }],
    };
    this.pending.push({ tx, revert: opts.revert === true, size: signed.hex.length / 2 });
    return tx.txID;
  }

  /** `n` blocks; the first holds the transactions that arrived since the last one (none while `holdPending` is on). */
  mine(n = 1): void {
    for (let i = 0; i < n; i++) {
      if (this.holding) {
        this.mineBlock([]);
        continue;
      }
      const txs = this.pending;
      this.pending = [];
      this.mineBlock(txs);
    }
  }

  /**
   * While on, mined blocks leave the pending pool waiting (a congested network): a transaction
   * stays pending until it is mined after this is turned off, or until a block's time passes its
   * expiration, when the pool drops it as java-tron does.
   */
  holdPending(on: boolean): void {
    this.holding = on;
  }

  /**
   * While set, every broadcast is answered with this code of java-tron's about the node itself
   * (`SERVER_BUSY`, `NO_CONNECTION`, `NOT_ENOUGH_EFFECTIVE_CONNECTION`, `BLOCK_UNSOLIDIFIED`) and
   * nothing is taken in, as a node in trouble answers.
   */
  busy(code: string | null): void {
    this.busyCode = code;
  }

  /** Block time passes (the next block is `ms` later): resources recover, locks and unfreezes expire. */
  skipTime(ms: number): void {
    this.skipped += ms;
  }

  /** Drops the last `depth` blocks with their transactions (not put back to be mined): the next mined blocks form another branch. */
  reorg(depth: number): void {
    const first = this.blocks.length - depth;
    const before = this.snapshots.get(first);
    if (!before || first < 1) throw new Error(`the stand-in cannot reorganise ${depth} blocks`);
    for (const block of this.blocks.splice(first, depth)) {
      for (const info of this.infos.get(block.blockID) ?? []) this.known.delete(info.id);
      this.infos.delete(block.blockID);
    }
    for (const n of [...this.snapshots.keys()]) if (n > first) this.snapshots.delete(n);
    this.state = cloneState(before);
    this.branch++;
  }

  /** The head block's reference (TaPoS) and time, for a transaction built against this chain. */
  head(): { ref_block_bytes: string; ref_block_hash: string; timestamp: number } {
    const head = this.blocks.at(-1)!;
    return { ref_block_bytes: head.blockID.slice(12, 16), ref_block_hash: head.blockID.slice(16, 32), timestamp: head.block_header.raw_data.timestamp };
  }

  /** The node's info of a mined transaction, as it answers it (a test may alter it to play a faulty node). */
  info(txid: string): TronTxInfo {
    return this.known.get(txid)!.info;
  }

  /** `/wallet/getaccountresource` of `address`, as the node answers it. */
  resources(address: string): Record<string, number> {
    return this.accountResource(hex20(address));
  }

  /** Writes the chain and its state to `file` (private), for `load` at the next start. */
  save(file: string): void {
    const saved = { payerKey: this.payerKey, usdt: this.usdt, branch: this.branch, blocks: this.blocks, infos: [...this.infos], state: this.state };
    writePrivateFile(
      file,
      JSON.stringify(saved, (_k, v: unknown) => (typeof v === 'bigint' ? { $big: v.toString() } : v instanceof Map ? { $map: [...v] } : v)),
    );
  }

  /** A node with the chain `save` wrote (not listening yet). */
  static load(file: string): TronNode {
    const saved = JSON.parse(readFileSync(file, 'utf8'), (_k, v: unknown) => {
      const o = v as { $big?: string; $map?: Array<[unknown, unknown]> } | null;
      if (o && typeof o === 'object' && typeof o.$big === 'string') return BigInt(o.$big);
      if (o && typeof o === 'object' && Array.isArray(o.$map)) return new Map(o.$map);
      return v;
    }) as { payerKey: string; usdt: string; branch: number; blocks: TronBlock[]; infos: Array<[string, TronTxInfo[]]>; state: State };
    return new TronNode(
      { payerKey: saved.payerKey, usdt: saved.usdt },
      { blocks: saved.blocks, infos: new Map(saved.infos), state: saved.state, branch: saved.branch },
    );
  }

  // ---- transactions -------------------------------------------------------------------------

  /** An unsigned transaction's raw_data as java-tron builds it: on the head block, expiring 60 s after it. */
  private unsigned(type: string, value: Record<string, unknown>, feeLimit?: number, offsetMs = 0): TronTx['raw_data'] {
    const head = this.head();
    // A millisecond apart, so that two equal payments into one block are two transactions.
    const now = head.timestamp + BLOCK_MS + offsetMs;
    return {
      contract: [{ parameter: { value, type_url: `type.googleapis.com/protocol.${type}` }, type }],
      ref_block_bytes: head.ref_block_bytes,
      ref_block_hash: head.ref_block_hash,
      expiration: head.timestamp + 60_000 + offsetMs,
      timestamp: now,
      ...(feeLimit === undefined ? {} : { fee_limit: feeLimit }),
    };
  }

  /** An unsigned transaction as the node's builder endpoints answer it, after validating its contract. */
  private build(type: string, value: Record<string, unknown>, feeLimit?: number): Record<string, unknown> {
    const raw = this.unsigned(type, value, feeLimit);
    this.validate(raw.contract[0]!.type, raw.contract[0]!.parameter.value, this.slotTime());
    const pb = utils.transaction.txJsonToPb({ raw_data: raw } as never);
    return {
      visible: false,
      txID: utils.transaction.txPbToTxID(pb).replace(/^0x/, ''),
      raw_data: raw,
      raw_data_hex: utils.transaction.txPbToRawDataHex(pb).toLowerCase(),
    };
  }

  /** A signed transaction (protobuf bytes), checked as a node checks it before it spreads. */
  private accept(bytes: Buffer): Record<string, unknown> {
    let parts: { raw: Buffer; signatures: Buffer[] };
    let raw: TronTx['raw_data'];
    try {
      parts = splitTransaction(bytes);
      raw = decodeRaw(parts.raw.toString('hex'));
    } catch {
      return refusal('OTHER_ERROR', 'transaction cannot be parsed');
    }
    const txID = sha256(parts.raw.toString('hex'));
    if (this.known.has(txID) || this.pending.some((p) => p.tx.txID === txID)) return refusal('DUP_TRANSACTION_ERROR', 'dup transaction', txID);
    const contract = raw.contract[0]!;
    const owner = String(contract.parameter.value.owner_address);
    if (parts.signatures.length !== 1 || recoverOwner(txID, parts.signatures[0]) !== owner)
      return refusal('SIGERROR', 'validate signature error: the signature does not recover the owner address', txID);
    const head = this.head();
    if (raw.expiration <= head.timestamp) return refusal('TRANSACTION_EXPIRATION_ERROR', 'transaction expired', txID);
    if (raw.expiration > head.timestamp + MAX_EXPIRATION_MS) return refusal('TRANSACTION_EXPIRATION_ERROR', 'expiration is too long', txID);
    if (!this.blocks.some((b) => b.blockID.slice(12, 16) === raw.ref_block_bytes && b.blockID.slice(16, 32) === raw.ref_block_hash))
      return refusal('TAPOS_ERROR', 'Tapos check error', txID);
    const size = bytes.length;
    try {
      this.validate(contract.type, contract.parameter.value, this.slotTime());
      this.checkBandwidth(contract, size + RESULT_BYTES);
    } catch (err) {
      return refusal((err as Invalid).code ?? 'CONTRACT_VALIDATE_ERROR', (err as Error).message, txID);
    }
    const tx: TronTx = {
      txID,
      raw_data: raw,
      raw_data_hex: parts.raw.toString('hex'),
      signature: parts.signatures.map((b) => b.toString('hex')),
      ret: [{ contractRet: 'SUCCESS' }],
    };
    this.pending.push({ tx, revert: false, size });
    return { result: true, txid: txID, tx };
  }

  /** `/wallet/broadcasttransaction`: a signed transaction in JSON (raw_data as built, signature list). */
  private broadcastJson(body: Record<string, unknown>): unknown {
    const signatures = body.signature;
    if (!Array.isArray(signatures) || signatures.some((s) => typeof s !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(s)))
      return refusal('SIGERROR', 'miss sig or contract');
    let pb: { serializeBinary(): Uint8Array; addSignature(b: Uint8Array): void };
    try {
      pb = utils.transaction.txJsonToPb({ raw_data: body.raw_data } as never) as never;
    } catch {
      return refusal('OTHER_ERROR', 'transaction cannot be parsed');
    }
    for (const s of signatures as string[]) pb.addSignature(Buffer.from(s, 'hex'));
    const got = this.accept(Buffer.from(pb.serializeBinary()));
    delete got.tx;
    return got;
  }

  /** `/wallet/broadcasthex`: a signed Transaction protobuf. */
  private broadcastHex(hex: unknown): unknown {
    if (this.busyCode !== null) return refusal(this.busyCode, 'the node cannot take transactions now');
    if (typeof hex !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(hex)) return refusal('OTHER_ERROR', 'transaction cannot be parsed');
    const got = this.accept(Buffer.from(hex, 'hex'));
    if (got.tx) got.transaction = JSON.stringify(got.tx);
    delete got.tx;
    return got;
  }

  // ---- resources ----------------------------------------------------------------------------

  /** The slot (3 s) of the block being built: the time resources recover by. */
  private slotTime(): number {
    return this.blocks.at(-1)!.block_header.raw_data.timestamp + BLOCK_MS + this.skipped;
  }

  private totalWeight(resource: Resource): number {
    let staked = 0n;
    for (const a of this.state.accounts.values()) staked += a.frozen[resource];
    return (resource === 'ENERGY' ? BASE_ENERGY_WEIGHT : BASE_NET_WEIGHT) + Number(staked / BigInt(TRX));
  }

  /** An account's limit of `resource`: its share (own stake not delegated out, plus delegated to it) of the network's. */
  private limit(a: Account, resource: Resource): number {
    const stake = a.frozen[resource] - a.delegatedOut[resource] + a.acquired[resource];
    const total = resource === 'ENERGY' ? TOTAL_ENERGY_LIMIT : TOTAL_NET_LIMIT;
    return Math.floor(Number(stake / BigInt(TRX)) * (total / this.totalWeight(resource)));
  }

  private accountResource(address: string): Record<string, number> {
    const a = this.state.accounts.get(address);
    if (!a) return {};
    const slot = slotOf(this.head().timestamp + this.skipped);
    const out: Record<string, number> = {
      freeNetUsed: recovered(a.freeNet, slot),
      freeNetLimit: FREE_NET_LIMIT,
      NetUsed: recovered(a.net, slot),
      NetLimit: this.limit(a, 'BANDWIDTH'),
      TotalNetLimit: TOTAL_NET_LIMIT,
      TotalNetWeight: this.totalWeight('BANDWIDTH'),
      tronPowerLimit: Number((a.frozen.BANDWIDTH + a.frozen.ENERGY) / BigInt(TRX)),
      EnergyUsed: recovered(a.energy, slot),
      EnergyLimit: this.limit(a, 'ENERGY'),
      TotalEnergyLimit: TOTAL_ENERGY_LIMIT,
      TotalEnergyWeight: this.totalWeight('ENERGY'),
    };
    // java-tron leaves out fields that are zero.
    for (const k of Object.keys(out)) if (out[k] === 0) delete out[k];
    return out;
  }

  /**
   * Where a transaction's bandwidth comes from: staked bandwidth, else (a TRX transfer that creates an
   * account) CREATE_ACCOUNT_BANDWIDTH_FEE burnt, else the 600 free bytes of the day, else every byte
   * burnt at SUN_PER_BANDWIDTH. `burn` is what it takes from the balance.
   */
  private bandwidthSource(owner: Account, bytes: number, slot: number, createsAccount: boolean): { from: 'staked' | 'free' | 'burn'; burn: bigint } {
    if (this.limit(owner, 'BANDWIDTH') - recovered(owner.net, slot) >= bytes) return { from: 'staked', burn: 0n };
    if (createsAccount) return { from: 'burn', burn: BigInt(CREATE_ACCOUNT_BANDWIDTH_FEE) };
    if (FREE_NET_LIMIT - recovered(owner.freeNet, slot) >= bytes) return { from: 'free', burn: 0n };
    return { from: 'burn', burn: BigInt(bytes * SUN_PER_BANDWIDTH) };
  }

  /**
   * Refuses a transaction whose owner cannot pay its bandwidth, and a TRX transfer whose amount (and
   * account creation) the balance left after its bandwidth cannot cover: java-tron consumes the
   * bandwidth before the contract's checks run, so a balance never goes below zero.
   */
  private checkBandwidth(contract: TronTx['raw_data']['contract'][number], bytes: number): void {
    const v = contract.parameter.value;
    const owner = this.state.accounts.get(String(v.owner_address).slice(2));
    if (!owner) throw new Invalid('Validate TransferContract error, no OwnerAccount.');
    const creates = contract.type === 'TransferContract' && !this.state.accounts.has(String(v.to_address).slice(2));
    const { burn } = this.bandwidthSource(owner, bytes, slotOf(this.slotTime()), creates);
    if (owner.balance < burn)
      throw new Invalid(
        creates ? `Account has insufficient bandwidth[${bytes}] and balance[${owner.balance}] to create new account` : 'Account resource insufficient error.',
        'BANDWITH_ERROR',
      );
    if (contract.type === 'TransferContract') {
      const amount = BigInt(v.amount as number | bigint);
      if (owner.balance - burn < amount + (creates ? BigInt(CREATE_ACCOUNT_FEE) : 0n))
        throw new Invalid('Validate TransferContract error, balance is not sufficient.');
    }
  }

  /** Charges the transaction's bandwidth where `bandwidthSource` says. Returns the receipt's net_usage and net_fee. */
  private chargeBandwidth(owner: Account, bytes: number, slot: number, createsAccount: boolean): { net_usage?: number; net_fee?: number } {
    const { from, burn } = this.bandwidthSource(owner, bytes, slot, createsAccount);
    if (from === 'staked') owner.net = consume(owner.net, slot, bytes);
    if (from === 'free') owner.freeNet = consume(owner.freeNet, slot, bytes);
    if (from !== 'burn') return { net_usage: bytes };
    owner.balance -= burn;
    return { net_fee: Number(burn) };
  }

  // ---- contracts ----------------------------------------------------------------------------

  /** Throws Invalid when the contract cannot run on the current state (java-tron's actuator checks). */
  private validate(type: string, v: Record<string, unknown>, now: number): void {
    const ownerHex = String(v.owner_address ?? '');
    if (!/^41[0-9a-f]{40}$/.test(ownerHex)) throw new Invalid('Invalid ownerAddress!');
    const owner = this.state.accounts.get(ownerHex.slice(2));
    const name = type.replace(/Contract$/, '');
    if (!owner) throw new Invalid(`Account[${ownerHex}] does not exist`);
    const resource = (v.resource as Resource | undefined) ?? 'BANDWIDTH';
    if (!RESOURCES.includes(resource)) throw new Invalid('ResourceCode error, valid ResourceCode[BANDWIDTH、ENERGY]');
    const amountOf = (key: string): bigint => {
      const n = v[key];
      if (typeof n === 'bigint' && n > 0n) return n;
      if (!Number.isSafeInteger(n) || (n as number) <= 0) throw new Invalid(`${key} must be positive`);
      return BigInt(n as number);
    };
    switch (type) {
      case 'TransferContract': {
        const amount = amountOf('amount');
        const to = String(v.to_address ?? '');
        if (!/^41[0-9a-f]{40}$/.test(to)) throw new Invalid('Invalid toAddress!');
        if (to === ownerHex) throw new Invalid('Cannot transfer TRX to yourself.');
        const fee = this.state.accounts.has(to.slice(2)) ? 0n : BigInt(CREATE_ACCOUNT_FEE);
        if (owner.balance < amount + fee) throw new Invalid(`Validate TransferContract error, balance is not sufficient.`);
        return;
      }
      case 'TriggerSmartContract':
        if (!/^41[0-9a-f]{40}$/.test(String(v.contract_address ?? ''))) throw new Invalid('Invalid contract address');
        if (String(v.contract_address).slice(2) !== hex20(this.usdt) && String(v.contract_address).slice(2) !== hex20(this.forwarder))
          throw new Invalid('No contract or not a smart contract');
        return;
      case 'FreezeBalanceV2Contract': {
        const amount = amountOf('frozen_balance');
        if (amount < BigInt(TRX)) throw new Invalid('frozenBalance must be greater than or equal to 1 TRX');
        if (amount > owner.balance) throw new Invalid('frozenBalance must be less than or equal to accountBalance');
        return;
      }
      case 'UnfreezeBalanceV2Contract': {
        const amount = amountOf('unfreeze_balance');
        if (owner.frozen[resource] - owner.delegatedOut[resource] < amount) throw new Invalid(`Invalid unfreeze_balance, [${amount}] is too large`);
        if (owner.unfrozen.filter((u) => u.expire > now).length >= 32) throw new Invalid('Invalid unfreeze operation, unfreezing times is over limit');
        return;
      }
      case 'WithdrawExpireUnfreezeContract':
        if (!owner.unfrozen.some((u) => u.expire <= now)) throw new Invalid('no unFreeze balance to withdraw ');
        return;
      case 'DelegateResourceContract': {
        const amount = amountOf('balance');
        if (amount < BigInt(TRX)) throw new Invalid('delegateBalance must be greater than or equal to 1 TRX');
        const to = String(v.receiver_address ?? '');
        if (to === ownerHex) throw new Invalid('receiverAddress must not be the same as ownerAddress');
        if (!this.state.accounts.has(to.slice(2))) throw new Invalid(`Account[${to}] does not exist`);
        if (amount > this.delegatable(owner, resource, now)) throw new Invalid(`delegateBalance must be less than or equal to available FreezeV2 balance`);
        return;
      }
      case 'UnDelegateResourceContract': {
        const amount = amountOf('balance');
        const to = String(v.receiver_address ?? '').slice(2);
        const unlocked = this.state.delegations
          .filter((d) => d.from === ownerHex.slice(2) && d.to === to && d.resource === resource && d.lockUntil <= now)
          .reduce((s, d) => s + d.balance, 0n);
        if (unlocked < amount) throw new Invalid(`insufficient delegatedFrozenBalance(${resource}), request=${amount}, unlock_balance=${unlocked}`);
        return;
      }
      default:
        throw new Invalid(`${name}: contract type not supported by the stand-in`, 'NOT_ENOUGH_EFFECTIVE_CONNECTION');
    }
  }

  /** Own stake of `resource` not delegated out nor backing what the account has used (java-tron's delegatable amount). */
  private delegatable(a: Account, resource: Resource, now: number): bigint {
    const used = recovered(resource === 'ENERGY' ? a.energy : a.net, slotOf(now));
    const total = resource === 'ENERGY' ? TOTAL_ENERGY_LIMIT : TOTAL_NET_LIMIT;
    const backing = BigInt(Math.ceil((used * TRX * this.totalWeight(resource)) / total));
    return a.frozen[resource] - a.delegatedOut[resource] - backing;
  }

  /** Runs a pending transaction in the block being mined; null when it no longer validates (dropped). */
  private apply(p: Pending, blockNumber: number, blockTimeStamp: number): TronTxInfo | null {
    const contract = p.tx.raw_data.contract[0]!;
    const v = contract.parameter.value;
    try {
      this.validate(contract.type, v, blockTimeStamp);
      this.checkBandwidth(contract, p.size + RESULT_BYTES);
    } catch {
      return null;
    }
    const slot = slotOf(blockTimeStamp);
    const ownerKey = String(v.owner_address).slice(2);
    const owner = this.state.accounts.get(ownerKey)!;
    const info: TronTxInfo = { id: p.tx.txID, blockNumber, blockTimeStamp, contractResult: [''], receipt: {} };
    let fee = 0;
    const createsAccount = contract.type === 'TransferContract' && !this.state.accounts.has(String(v.to_address).slice(2));
    const net = this.chargeBandwidth(owner, p.size + RESULT_BYTES, slot, createsAccount);
    info.receipt = { ...net };
    fee += net.net_fee ?? 0;
    const resource = (v.resource as Resource | undefined) ?? 'BANDWIDTH';
    switch (contract.type) {
      case 'TransferContract': {
        const to = String(v.to_address).slice(2);
        const amount = BigInt(v.amount as number | bigint);
        if (createsAccount) {
          this.state.accounts.set(to, newAccount(0n, blockTimeStamp));
          owner.balance -= BigInt(CREATE_ACCOUNT_FEE);
          fee += CREATE_ACCOUNT_FEE;
        }
        owner.balance -= amount;
        this.state.accounts.get(to)!.balance += amount;
        break;
      }
      case 'TriggerSmartContract':
        fee += this.runTokenCall(p, owner, slot, info);
        break;
      case 'FreezeBalanceV2Contract': {
        const amount = BigInt(v.frozen_balance as number);
        owner.balance -= amount;
        owner.frozen[resource] += amount;
        break;
      }
      case 'UnfreezeBalanceV2Contract': {
        const amount = BigInt(v.unfreeze_balance as number);
        owner.frozen[resource] -= amount;
        owner.unfrozen.push({ resource, amount, expire: blockTimeStamp + UNFREEZE_DELAY_MS });
        break;
      }
      case 'WithdrawExpireUnfreezeContract': {
        const due = owner.unfrozen.filter((u) => u.expire <= blockTimeStamp);
        const amount = due.reduce((s, u) => s + u.amount, 0n);
        owner.unfrozen = owner.unfrozen.filter((u) => u.expire > blockTimeStamp);
        owner.balance += amount;
        info.withdraw_expire_amount = Number(amount);
        break;
      }
      case 'DelegateResourceContract': {
        const amount = BigInt(v.balance as number);
        const to = String(v.receiver_address).slice(2);
        const lockUntil = v.lock === true ? blockTimeStamp + (Number(v.lock_period) || DEFAULT_LOCK_BLOCKS) * BLOCK_MS : 0;
        owner.delegatedOut[resource] += amount;
        this.state.accounts.get(to)!.acquired[resource] += amount;
        const same = this.state.delegations.find(
          (d) => d.from === ownerKey && d.to === to && d.resource === resource && (d.lockUntil === 0) === (lockUntil === 0),
        );
        if (same) {
          same.balance += amount;
          same.lockUntil = Math.max(same.lockUntil, lockUntil);
        } else this.state.delegations.push({ from: ownerKey, to, resource, balance: amount, lockUntil });
        break;
      }
      case 'UnDelegateResourceContract': {
        let left = BigInt(v.balance as number);
        const to = String(v.receiver_address).slice(2);
        for (const d of this.state.delegations.filter((x) => x.from === ownerKey && x.to === to && x.resource === resource && x.lockUntil <= blockTimeStamp)) {
          const take = d.balance < left ? d.balance : left;
          d.balance -= take;
          left -= take;
        }
        const amount = BigInt(v.balance as number);
        owner.delegatedOut[resource] -= amount;
        this.state.accounts.get(to)!.acquired[resource] -= amount;
        this.state.delegations = this.state.delegations.filter((d) => d.balance > 0n);
        break;
      }
    }
    if (fee > 0) info.fee = fee;
    this.known.set(p.tx.txID, { tx: p.tx, info });
    return info;
  }

  /** Energy the token call needs: more to an address holding none of the token yet. */
  private energyFor(data: string, from: string, revert: boolean, selector = TRANSFER_SELECTOR): { energy: number; ok: boolean } {
    if (revert || !data.startsWith(selector) || data.length < 136) return { energy: ENERGY_REVERT, ok: false };
    const to = data.slice(32, 72);
    const amount = BigInt('0x' + data.slice(72, 136));
    if ((this.state.tokens.get(from) ?? 0n) < amount) return { energy: ENERGY_REVERT, ok: false };
    return { energy: (this.state.tokens.get(to) ?? 0n) > 0n ? ENERGY_TO_HOLDER : ENERGY_TO_NEW_HOLDER, ok: true };
  }

  /** The token call of a mined transaction: its energy paid (staked first, then burnt within fee_limit), its effect; returns the TRX burnt. */
  private runTokenCall(p: Pending, owner: Account, slot: number, info: TronTxInfo): number {
    const v = p.tx.raw_data.contract[0]!.parameter.value;
    const from = String(v.owner_address).slice(2);
    const data = String(v.data ?? '').toLowerCase();
    const contract = String(v.contract_address).toLowerCase();
    info.contract_address = contract;
    const forwarded = contract.slice(2) === hex20(this.forwarder);
    const { energy, ok } = this.energyFor(data, from, p.revert, forwarded ? FORWARD_SELECTOR : TRANSFER_SELECTOR);
    const available = Math.max(0, this.limit(owner, 'ENERGY') - recovered(owner.energy, slot));
    const fromStake = Math.min(available, energy);
    const budget = owner.balance < BigInt(p.tx.raw_data.fee_limit ?? 0) ? owner.balance : BigInt(p.tx.raw_data.fee_limit ?? 0);
    let burnt = BigInt((energy - fromStake) * SUN_PER_ENERGY);
    let result = ok ? 'SUCCESS' : 'REVERT';
    let used = energy;
    if (burnt > budget) {
      result = 'OUT_OF_ENERGY';
      burnt = budget;
      used = fromStake + Number(budget / BigInt(SUN_PER_ENERGY));
    }
    owner.energy = consume(owner.energy, slot, fromStake);
    owner.balance -= burnt;
    info.receipt = {
      ...info.receipt,
      ...(fromStake ? { energy_usage: fromStake } : {}),
      ...(burnt ? { energy_fee: Number(burnt) } : {}),
      energy_usage_total: used,
      result,
    };
    if (result !== 'SUCCESS') {
      p.tx.ret = [{ contractRet: result }];
      Object.assign(info, {
        result: 'FAILED',
        resMessage: Buffer.from(result === 'REVERT' ? 'REVERT opcode executed' : 'Not enough energy').toString('hex'),
        contractResult: [result === 'REVERT' ? '08c379a0' : ''],
      });
      return Number(burnt);
    }
    if (this.quirk === 'false') {
      info.contractResult = [word('0')];
      return Number(burnt);
    }
    const t = { to: data.slice(32, 72), amount: BigInt('0x' + data.slice(72, 136)) };
    const moves =
      this.quirk === 'fee'
        ? [
            { to: TOKEN_FEE_COLLECTOR, amount: t.amount / 100n },
            { to: t.to, amount: t.amount - t.amount / 100n },
          ]
        : [t];
    for (const m of moves) {
      this.state.tokens.set(from, (this.state.tokens.get(from) ?? 0n) - m.amount);
      this.state.tokens.set(m.to, (this.state.tokens.get(m.to) ?? 0n) + m.amount);
    }
    info.contractResult = [word('1')];
    // The token's own logs, under its address, however it was called.
    info.log = moves.map((m) => ({ address: hex20(this.usdt), topics: [TRANSFER_TOPIC, word(from), word(m.to)], data: word(m.amount.toString(16)) }));
    if (forwarded) {
      // The forwarder's call into the token, and an event of its own shaped like a Transfer (not the token's: never a payment).
      info.internal_transactions = [
        {
          hash: sha256(p.tx.txID + '01'),
          caller_address: contract,
          transferTo_address: '41' + hex20(this.usdt),
          callValueInfo: [{}],
          note: Buffer.from('call').toString('hex'),
        },
      ];
      info.log.push({ address: contract.slice(2), topics: [TRANSFER_TOPIC, word(from), word(t.to)], data: word(t.amount.toString(16)) });
    }
    return Number(burnt);
  }

  /** `/wallet/triggerconstantcontract`: the call run on the head state without a trace; `transfer` gives the energy it would use. */
  private constantCall(body: Record<string, unknown>): unknown {
    const owner = hex20(String(body.owner_address ?? ''));
    const contract = hex20(String(body.contract_address ?? ''));
    if (contract !== hex20(this.usdt))
      return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: Buffer.from('No contract or not a valid smart contract').toString('hex') } };
    const data = callData(body);
    const value = { owner_address: '41' + owner, contract_address: '41' + contract, data };
    const transaction = this.buildUnchecked('TriggerSmartContract', value);
    if (data.startsWith(DECIMALS_SELECTOR))
      return { result: { result: true }, energy_used: ENERGY_BALANCE_OF, constant_result: [word(TOKEN_DECIMALS.toString(16))], transaction };
    if (data.startsWith(BALANCE_OF_SELECTOR)) {
      const of = data.slice(32, 72);
      return { result: { result: true }, energy_used: ENERGY_BALANCE_OF, constant_result: [word((this.state.tokens.get(of) ?? 0n).toString(16))], transaction };
    }
    const { energy, ok } = this.energyFor(data, owner, false);
    if (!ok)
      return {
        result: { result: true, message: Buffer.from('REVERT opcode executed').toString('hex') },
        energy_used: energy,
        constant_result: ['08c379a0'],
        transaction: { ...transaction, ret: [{ ret: 'FAILED' }] },
      };
    return { result: { result: true }, energy_used: energy, constant_result: [word('1')], transaction: { ...transaction, ret: [{}] } };
  }

  private buildUnchecked(type: string, value: Record<string, unknown>, feeLimit?: number): Record<string, unknown> {
    const raw = this.unsigned(type, value, feeLimit);
    const pb = utils.transaction.txJsonToPb({ raw_data: raw } as never);
    return {
      visible: false,
      txID: utils.transaction.txPbToTxID(pb).replace(/^0x/, ''),
      raw_data: raw,
      raw_data_hex: utils.transaction.txPbToRawDataHex(pb).toLowerCase(),
    };
  }

  /** `/wallet/triggersmartcontract`: the unsigned call for the client to sign. */
  private triggerSmartContract(body: Record<string, unknown>): unknown {
    try {
      const value: Record<string, unknown> = {
        owner_address: '41' + hex20(String(body.owner_address ?? '')),
        contract_address: '41' + hex20(String(body.contract_address ?? '')),
        data: callData(body),
      };
      if (Number(body.call_value) > 0) value.call_value = Number(body.call_value);
      const feeLimit = Number(body.fee_limit) > 0 ? Number(body.fee_limit) : undefined;
      return { result: { result: true }, transaction: this.build('TriggerSmartContract', value, feeLimit) };
    } catch (err) {
      return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: Buffer.from((err as Error).message).toString('hex') } };
    }
  }

  private account(address: string): unknown {
    const a = this.state.accounts.get(address);
    if (!a) return {};
    const slot = slotOf(this.head().timestamp + this.skipped);
    const n = (x: bigint) => (x > 0n ? (x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x) : undefined);
    const out: Record<string, unknown> = {
      address: '41' + address,
      balance: n(a.balance),
      create_time: a.createTime,
      net_usage: recovered(a.net, slot) || undefined,
      free_net_usage: recovered(a.freeNet, slot) || undefined,
      // As java-tron keeps it: a delegation moves its TRX out of frozenV2 into delegated_frozenV2_balance_for_*.
      frozenV2: [
        { amount: n(a.frozen.BANDWIDTH - a.delegatedOut.BANDWIDTH) },
        { type: 'ENERGY', amount: n(a.frozen.ENERGY - a.delegatedOut.ENERGY) },
        { type: 'TRON_POWER' },
      ],
      unfrozenV2: a.unfrozen.length
        ? a.unfrozen.map((u) => ({ ...(u.resource === 'ENERGY' ? { type: 'ENERGY' } : {}), unfreeze_amount: Number(u.amount), unfreeze_expire_time: u.expire }))
        : undefined,
      delegated_frozenV2_balance_for_bandwidth: n(a.delegatedOut.BANDWIDTH),
      acquired_delegated_frozenV2_balance_for_bandwidth: n(a.acquired.BANDWIDTH),
      account_resource: {
        energy_usage: recovered(a.energy, slot) || undefined,
        delegated_frozenV2_balance_for_energy: n(a.delegatedOut.ENERGY),
        acquired_delegated_frozenV2_balance_for_energy: n(a.acquired.ENERGY),
        energy_window_size: WINDOW,
      },
      net_window_size: WINDOW,
    };
    return withoutUndefined(out);
  }

  private delegatedResource(from: string, to: string): unknown {
    const list = this.state.delegations.filter((d) => d.from === from && d.to === to);
    if (!list.length) return {};
    return {
      delegatedResource: list.map((d) => ({
        from: '41' + from,
        to: '41' + to,
        ...(d.resource === 'ENERGY'
          ? { frozen_balance_for_energy: Number(d.balance), ...(d.lockUntil ? { expire_time_for_energy: d.lockUntil } : {}) }
          : { frozen_balance_for_bandwidth: Number(d.balance), ...(d.lockUntil ? { expire_time_for_bandwidth: d.lockUntil } : {}) }),
      })),
    };
  }

  // ---- blocks -------------------------------------------------------------------------------

  private mineBlock(txs: Pending[]): void {
    const parent = this.blocks.at(-1);
    const number = this.blocks.length;
    const timestamp = (parent?.block_header.raw_data.timestamp ?? 1_700_000_000_000 - BLOCK_MS) + BLOCK_MS + this.skipped;
    this.skipped = 0;
    if (number > 0) {
      this.snapshots.set(number, cloneState(this.state));
      this.snapshots.delete(number - SNAPSHOTS);
    }
    const included: Pending[] = [];
    const infos: TronTxInfo[] = [];
    // A block's time past a waiting transaction's expiration: it can never be mined now (java-tron drops it).
    this.pending = this.pending.filter((p) => p.tx.raw_data.expiration > timestamp);
    for (const p of txs) {
      if (p.tx.raw_data.expiration <= timestamp) continue;
      const info = this.apply(p, number, timestamp);
      if (!info) continue;
      included.push(p);
      infos.push(info);
    }
    const raw = {
      number,
      // Block 0 holds the chain's allocations (the payer's TRX and tokens): two stand-ins are two networks.
      txTrieRoot: sha256(number === 0 ? hex20(this.payer) + hex20(this.usdt) : included.map((p) => p.tx.txID).join('') || '00'),
      witness_address: '41' + keccak256(Buffer.from(`witness-${this.branch}`)).slice(-40),
      parentHash: parent?.blockID ?? '0'.repeat(64),
      version: 30,
      timestamp,
    };
    // java-tron's block id: the height in its first 8 bytes, then the header hash's last 24.
    const blockID = number.toString(16).padStart(16, '0') + sha256(Buffer.from(JSON.stringify(raw)).toString('hex')).slice(16);
    this.blocks.push({
      blockID,
      block_header: { raw_data: raw, witness_signature: randomBytes(65).toString('hex') },
      transactions: included.length ? included.map((p) => p.tx) : undefined,
    });
    this.infos.set(blockID, infos);
  }

  private answer(path: string, body: Record<string, unknown>): unknown {
    const byNum = (n: unknown) => (Number.isInteger(n) && (n as number) >= 0 ? this.blocks[n as number] : undefined);
    const addr = (key: string) => hex20(String(body[key] ?? ''));
    switch (path) {
      case '/wallet/getnowblock':
        return this.blocks.at(-1);
      case '/wallet/getblockbynum':
        return byNum(body.num) ?? {};
      case '/wallet/getblock': {
        const key = body.id_or_num === undefined ? String(this.height) : String(body.id_or_num);
        const b = /^\d+$/.test(key) ? byNum(Number(key)) : this.blocks.find((x) => x.blockID === key.toLowerCase());
        if (!b) return {};
        return body.detail === true ? b : { blockID: b.blockID, block_header: b.block_header };
      }
      case '/wallet/getblockbylimitnext': {
        const [start, end] = [Number(body.startNum), Number(body.endNum)];
        if (!(end > start) || end - start > 100) return { Error: 'class java.lang.IllegalArgumentException : startNum or endNum is invalid' };
        const block = this.blocks.slice(start, end);
        return block.length ? { block } : {};
      }
      case '/wallet/gettransactioninfobyblocknum': {
        const b = byNum(body.num);
        return b ? this.infos.get(b.blockID) : [];
      }
      case '/wallet/gettransactioninfobyid':
        return this.known.get(String(body.value))?.info ?? {};
      case '/wallet/gettransactionbyid':
        return this.known.get(String(body.value))?.tx ?? {};
      case '/wallet/gettransactionfrompending':
        return this.pending.find((p) => p.tx.txID === String(body.value))?.tx ?? {};
      case '/wallet/broadcasthex':
        return this.broadcastHex(body.transaction);
      case '/wallet/broadcasttransaction':
        return this.broadcastJson(body);
      case '/wallet/getchainparameters':
        return {
          chainParameter: [
            { key: 'getTransactionFee', value: SUN_PER_BANDWIDTH },
            { key: 'getEnergyFee', value: SUN_PER_ENERGY },
            { key: 'getCreateAccountFee', value: CREATE_ACCOUNT_BANDWIDTH_FEE },
            { key: 'getCreateNewAccountFeeInSystemContract', value: CREATE_ACCOUNT_FEE },
            { key: 'getFreeNetLimit', value: FREE_NET_LIMIT },
            { key: 'getTotalEnergyCurrentLimit', value: TOTAL_ENERGY_LIMIT },
            { key: 'getUnfreezeDelayDays', value: UNFREEZE_DELAY_MS / 86_400_000 },
            { key: 'getAllowNewResourceModel', value: 1 },
          ],
        };
      case '/wallet/getaccount':
        return this.account(addr('address'));
      case '/wallet/getaccountresource':
        return this.accountResource(addr('address'));
      case '/wallet/getdelegatedresourcev2':
        return this.delegatedResource(addr('fromAddress'), addr('toAddress'));
      case '/wallet/createtransaction':
        return this.build('TransferContract', {
          amount: Number(body.amount),
          owner_address: '41' + addr('owner_address'),
          to_address: '41' + addr('to_address'),
        });
      case '/wallet/freezebalancev2':
        return this.build(
          'FreezeBalanceV2Contract',
          withResource({ owner_address: '41' + addr('owner_address'), frozen_balance: Number(body.frozen_balance) }, body.resource),
        );
      case '/wallet/unfreezebalancev2':
        return this.build(
          'UnfreezeBalanceV2Contract',
          withResource({ owner_address: '41' + addr('owner_address'), unfreeze_balance: Number(body.unfreeze_balance) }, body.resource),
        );
      case '/wallet/withdrawexpireunfreeze':
        return this.build('WithdrawExpireUnfreezeContract', { owner_address: '41' + addr('owner_address') });
      case '/wallet/delegateresource': {
        const value = withResource(
          { owner_address: '41' + addr('owner_address'), receiver_address: '41' + addr('receiver_address'), balance: Number(body.balance) },
          body.resource,
        );
        if (body.lock === true) Object.assign(value, { lock: true }, Number(body.lock_period) > 0 ? { lock_period: Number(body.lock_period) } : {});
        return this.build('DelegateResourceContract', value);
      }
      case '/wallet/undelegateresource':
        return this.build(
          'UnDelegateResourceContract',
          withResource(
            { owner_address: '41' + addr('owner_address'), receiver_address: '41' + addr('receiver_address'), balance: Number(body.balance) },
            body.resource,
          ),
        );
      case '/wallet/triggersmartcontract':
        return this.triggerSmartContract(body);
      case '/wallet/triggerconstantcontract':
        return this.constantCall(body);
      case '/dev/mine': {
        const n = Number(body.blocks ?? 1);
        if (!Number.isInteger(n) || n < 1 || n > 1000) return { Error: 'blocks: 1 to 1000' };
        this.mine(n);
        this.onMinedOverHttp?.();
        return { height: this.height };
      }
      default:
        return { Error: `no such endpoint ${path}` };
    }
  }
}

/** What `save` keeps besides the keys. */
interface SavedChain {
  blocks: TronBlock[];
  infos: Map<string, TronTxInfo[]>;
  state: State;
  branch: number;
}

const newAccount = (balance: bigint, createTime: number): Account => ({
  balance,
  createTime,
  frozen: perResource(),
  delegatedOut: perResource(),
  acquired: perResource(),
  unfrozen: [],
  net: { used: 0, slot: 0 },
  freeNet: { used: 0, slot: 0 },
  energy: { used: 0, slot: 0 },
});

const cloneState = (s: State): State => structuredClone(s);

/** A JSON answer without its undefined fields (java-tron leaves out what is not set); bigints kept. */
function withoutUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutUndefined);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => [k, withoutUndefined(x)]),
  );
}

const slotOf = (ms: number): number => Math.floor(ms / BLOCK_MS);

/** Usage left at `slot` of what was used by `u.slot`: it recovers linearly over WINDOW slots. */
function recovered(u: Usage, slot: number): number {
  const elapsed = slot - u.slot;
  if (elapsed >= WINDOW) return 0;
  if (elapsed <= 0) return u.used;
  return Math.round((u.used * (WINDOW - elapsed)) / WINDOW);
}

const consume = (u: Usage, slot: number, amount: number): Usage => (amount > 0 ? { used: recovered(u, slot) + amount, slot } : u);

/** A contract value with `resource` as java-tron prints it: absent for BANDWIDTH (the enum's default). */
function withResource(value: Record<string, unknown>, resource: unknown): Record<string, unknown> {
  if (resource !== undefined && resource !== 'BANDWIDTH' && resource !== 'ENERGY')
    throw new Invalid('ResourceCode error, valid ResourceCode[BANDWIDTH、ENERGY]');
  return resource === 'ENERGY' ? { ...value, resource } : value;
}

/** A call's data from `data`, or `function_selector` (its keccak selector) and `parameter` (hex). */
function callData(body: Record<string, unknown>): string {
  if (typeof body.data === 'string') return body.data.replace(/^0x/, '').toLowerCase();
  const selector = keccak256(Buffer.from(String(body.function_selector ?? ''))).slice(2, 10);
  return selector + String(body.parameter ?? '').toLowerCase();
}

/**
 * Signs a transaction's raw_data (JSON, hex addresses) with `privateKey` (hex) as a Tron wallet
 * does: txID = sha256 of the raw_data protobuf, a 65-byte r‖s‖v signature of it. `hex` is the
 * whole signed Transaction protobuf, as /wallet/broadcasthex takes it.
 */
export function signTronTransaction(raw: Record<string, unknown>, privateKey: string): { txID: string; rawHex: string; signature: string; hex: string } {
  const value = (raw.contract as Array<{ parameter: { value: Record<string, unknown> } }> | undefined)?.[0]?.parameter.value;
  if (typeof value?.amount === 'bigint') return signExactAmount(raw, value.amount, privateKey);
  const pb = utils.transaction.txJsonToPb({ raw_data: raw, visible: false } as never);
  const txID = utils.transaction.txPbToTxID(pb).replace(/^0x/, '');
  const rawHex = utils.transaction.txPbToRawDataHex(pb).toLowerCase();
  const sig = new SigningKey('0x' + privateKey).sign('0x' + txID);
  const signature = sig.r.slice(2) + sig.s.slice(2) + (sig.v - 27).toString(16).padStart(2, '0');
  pb.addSignature(Buffer.from(signature, 'hex'));
  return { txID, rawHex, signature, hex: Buffer.from(pb.serializeBinary()).toString('hex') };
}

/**
 * signTronTransaction of a contract whose `amount` is beyond a JS number's exact range: tronweb
 * encodes int64 fields from numbers, so the nearest number is encoded and the exact varint put in
 * place of its own (the same length for amounts this size).
 */
function signExactAmount(raw: Record<string, unknown>, amount: bigint, privateKey: string): { txID: string; rawHex: string; signature: string; hex: string } {
  const contract = (raw.contract as Array<{ parameter: { value: Record<string, unknown> } }>)[0]!;
  const near = { ...raw, contract: [{ ...contract, parameter: { ...contract.parameter, value: { ...contract.parameter.value, amount: Number(amount) } } }] };
  const nearHex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: near, visible: false } as never)).toLowerCase();
  // Field 3 (amount) of TransferContract: tag 0x18, then the varint.
  const [from, to] = ['18' + varintHex(BigInt(Number(amount))), '18' + varintHex(amount)];
  const at = nearHex.indexOf(from);
  if (from.length !== to.length || at % 2 !== 0 || nearHex.indexOf(from, at + 1) !== -1)
    throw new Error(`the stand-in cannot encode the amount ${amount} exactly`);
  const rawHex = nearHex.slice(0, at) + to + nearHex.slice(at + to.length);
  const txID = sha256(rawHex);
  const sig = new SigningKey('0x' + privateKey).sign('0x' + txID);
  const signature = sig.r.slice(2) + sig.s.slice(2) + (sig.v - 27).toString(16).padStart(2, '0');
  // Transaction: raw_data (field 1) and one signature (field 2, 65 bytes).
  const hex = '0a' + varintHex(BigInt(rawHex.length / 2)) + rawHex + '1241' + signature;
  return { txID, rawHex, signature, hex };
}

function varintHex(n: bigint): string {
  let out = '';
  do {
    const low = Number(n & 0x7fn);
    n >>= 7n;
    out += (n > 0n ? low | 0x80 : low).toString(16).padStart(2, '0');
  } while (n > 0n);
  return out;
}

/** The hex owner address (41 ‖ 20 bytes) whose key made `signature` (r‖s‖v) of `txID`; '' when none. */
function recoverOwner(txID: string, signature: Buffer | undefined): string {
  if (signature?.length !== 65) return '';
  try {
    const hex = signature.toString('hex');
    const pub = SigningKey.recoverPublicKey('0x' + txID, { r: '0x' + hex.slice(0, 64), s: '0x' + hex.slice(64, 128), v: (signature[64]! % 27) + 27 });
    return '41' + keccak256('0x' + pub.slice(4)).slice(-40);
  } catch {
    return '';
  }
}

/** Fields of a protobuf message: [field number, wire type, bytes (length-delimited) or value (varint)]. */
function fields(bytes: Buffer): Array<[number, number, Buffer | number]> {
  const out: Array<[number, number, Buffer | number]> = [];
  let i = 0;
  const varint = (): number => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[i++];
      if (b === undefined || shift > 49) throw new Error('truncated');
      n += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return n;
    }
  };
  while (i < bytes.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) out.push([key >> 3, 0, varint()]);
    else if (wire === 2) {
      const len = varint();
      const field = bytes.subarray(i, i + len);
      if (field.length !== len) throw new Error('truncated');
      i += len;
      out.push([key >> 3, 2, field]);
    } else throw new Error('unexpected wire type');
  }
  return out;
}

/** The raw_data (field 1) and signatures (field 2) of a Transaction protobuf. */
function splitTransaction(bytes: Buffer): { raw: Buffer; signatures: Buffer[] } {
  const all = fields(bytes);
  const raw = all.find(([n, w]) => n === 1 && w === 2)?.[2] as Buffer | undefined;
  if (!raw) throw new Error('no raw_data');
  return { raw, signatures: all.filter(([n, w]) => n === 2 && w === 2).map(([, , b]) => b as Buffer) };
}

/**
 * The raw_data JSON of a raw_data protobuf as java-tron prints it (lower-case hex, default values
 * left out), for the contract types the stand-in runs; it must encode back to the same bytes.
 */
function decodeRaw(rawHex: string): TronTx['raw_data'] {
  const contracts = fields(Buffer.from(rawHex, 'hex')).filter(([n, w]) => n === 11 && w === 2);
  if (contracts.length !== 1) throw new Error('one contract expected');
  const typeNumber = fields(contracts[0]![2] as Buffer).find(([n, w]) => n === 1 && w === 0)?.[2] as number | undefined;
  const type = CONTRACT_TYPES[typeNumber ?? -1];
  if (!type) throw new Error('unsupported contract');
  const d = utils.deserializeTx.deserializeTransaction(type, rawHex) as unknown as Record<string, unknown> & {
    contract: Array<{ parameter: { value: Record<string, unknown> } }>;
  };
  const value: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d.contract[0]!.parameter.value)) {
    if (v === 0 || v === '' || v === false || (k === 'resource' && v === 'BANDWIDTH')) continue;
    value[k] = typeof v === 'string' && k !== 'resource' ? v.toLowerCase() : v;
  }
  const raw: Record<string, unknown> = {
    contract: [{ parameter: { value, type_url: `type.googleapis.com/protocol.${type}` }, type }],
    ref_block_bytes: String(d.ref_block_bytes).toLowerCase(),
    ref_block_hash: String(d.ref_block_hash).toLowerCase(),
    expiration: d.expiration,
  };
  if (d.timestamp) raw.timestamp = d.timestamp;
  if (d.fee_limit) raw.fee_limit = d.fee_limit;
  const again = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: raw } as never)).toLowerCase();
  if (again !== rawHex.toLowerCase()) throw new Error('fields the stand-in does not run');
  return raw as TronTx['raw_data'];
}

/** JSON with bigints as exact numerals, as java-tron prints int64 fields. */
function exactJson(body: unknown): string {
  const marker = `bigint-${randomBytes(8).toString('hex')}:`;
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? marker + v.toString() : v));
  return text === undefined ? '' : text.replace(new RegExp(`"${marker}(-?\\d+)"`, 'g'), '$1');
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(exactJson(body));
}
