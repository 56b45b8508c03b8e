/**
 * A stand-in for a Tron full node's HTTP API (no java-tron installs here), on 127.0.0.1: it keeps a
 * chain of blocks in java-tron's JSON shapes and answers the endpoints the adapter reads. Its
 * transactions are real Tron encodings built by tronweb (raw_data protobuf, txID = its sha256,
 * secp256k1 signatures of the payer), a TRC-20 token keeps balances and writes `Transfer` logs, a
 * call that fails (the payer short of tokens, or told to) is mined with receipt REVERT and no log.
 * Test hooks: `pay` (into the next block), `mine`, `reorg` (drop blocks; the next mined ones form the
 * new branch), `requireApiKey`. `/wallet/broadcasthex` checks a broadcast transaction's signature
 * against its owner address, its expiration against the head block and its reference block against
 * the chain, and mines it into the next block.
 *
 * Not emulated: bandwidth, energy and staking (fees are fixed figures), witnesses and solidification
 * (every block is final only by the test's word), TRC-10 assets, contracts other than the one token,
 * internal transactions.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SigningKey, keccak256 } from 'ethers';
import { TronWeb, utils } from 'tronweb';

const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const TRANSFER_SELECTOR = 'a9059cbb';
/** Energy a TRC-20 transfer takes: about twice as much to an address that holds none of the token yet. */
const ENERGY_TO_HOLDER = 14_650;
const ENERGY_TO_NEW_HOLDER = 29_650;
const SUN_PER_ENERGY = 420;
const BLOCK_MS = 3000;

export interface TronTx {
  txID: string;
  raw_data: {
    contract: Array<{ parameter: { value: Record<string, unknown>; type_url: string }; type: string }>;
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    timestamp: number;
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
  receipt: { net_usage?: number; energy_usage_total?: number; energy_fee?: number; result?: string };
  log?: Array<{ address: string; topics: string[]; data: string }>;
  result?: 'FAILED';
  resMessage?: string;
}

export interface TronBlock {
  blockID: string;
  block_header: {
    raw_data: { number: number; txTrieRoot: string; witness_address: string; parentHash: string; version: number; timestamp: number };
    witness_signature: string;
  };
  transactions?: TronTx[];
}

interface Pending {
  tx: TronTx;
  /** The test asked this token call to fail. */
  revert: boolean;
}

/** A refusal of broadcasthex, in java-tron's shape (the message is hex of its text). */
const refusal = (code: string, message: string) => ({ result: false, code, message: Buffer.from(message).toString('hex') });

/** 20-byte hex (no 0x, no 41) of a `T...` address. */
const hex20 = (base58: string): string => TronWeb.address.toHex(base58).slice(2).toLowerCase();
const word = (hex: string): string => hex.padStart(64, '0');
const sha256 = (hex: string): string => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');

export class TronNode {
  /** The payer's key and address: it holds TRX and the token's whole supply. */
  readonly payerKey = randomBytes(32).toString('hex');
  readonly payer: string;
  /** The token contract (`T...`). */
  readonly usdt: string;
  readonly blocks: TronBlock[] = [];
  private readonly infos = new Map<string, TronTxInfo[]>();
  private readonly known = new Map<string, { tx: TronTx; info: TronTxInfo }>();
  private readonly balances = new Map<string, bigint>();
  private readonly trx = new Map<string, bigint>();
  private pending: Pending[] = [];
  private branch = 0;
  private apiKey: string | null = null;
  /** Every request's path, in order: what the adapter asked for. */
  readonly requests: Array<{ path: string; apiKey: string | undefined }> = [];
  private server: http.Server | null = null;
  port = 0;

  constructor() {
    this.payer = TronWeb.address.fromPrivateKey(this.payerKey) as string;
    this.usdt = TronWeb.address.fromHex('41' + randomBytes(20).toString('hex'));
    this.balances.set(hex20(this.payer), 10n ** 15n);
    this.trx.set(hex20(this.payer), 10n ** 15n);
    this.mineBlock([]);
  }

  static async start(): Promise<TronNode> {
    const node = new TronNode();
    await node.listen();
    return node;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get height(): number {
    return this.blocks.length - 1;
  }

  /** From now on every request must carry this `TRON-PRO-API-KEY` (a hosted node's). */
  requireApiKey(key: string): void {
    this.apiKey = key;
  }

  async listen(port = 0): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        const key = req.headers['tron-pro-api-key'] as string | undefined;
        this.requests.push({ path, apiKey: key });
        if (this.apiKey !== null && key !== this.apiKey) return send(res, 401, { Error: 'ApiKey not exists' });
        let body: Record<string, unknown> = {};
        try {
          const text = Buffer.concat(chunks).toString();
          if (text) body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          return send(res, 200, { Error: 'invalid json request' });
        }
        send(res, 200, this.answer(path, body));
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The token balance of `address` in base units. */
  tokenBalance(address: string): bigint {
    return this.balances.get(hex20(address)) ?? 0n;
  }

  /**
   * A signed payment from the payer into the next mined block; returns its txID. `asset` is
   * `native` (TRX, a TransferContract) or the token (a TriggerSmartContract calling transfer); a
   * token call reverts when `revert` is set or the payer lacks the amount.
   */
  pay(to: string, asset: 'native' | string, amount: bigint, opts: { revert?: boolean } = {}): string {
    const owner = '41' + hex20(this.payer);
    const toHex = '41' + hex20(to);
    const native = asset === 'native';
    const value: Record<string, unknown> = native
      ? { amount: Number(amount), owner_address: owner, to_address: toHex }
      : { data: TRANSFER_SELECTOR + word(hex20(to)) + word(amount.toString(16)), owner_address: owner, contract_address: '41' + hex20(asset) };
    const type = native ? 'TransferContract' : 'TriggerSmartContract';
    const tx = this.build(type, value, native ? undefined : 100_000_000);
    this.pending.push({ tx, revert: opts.revert === true });
    return tx.txID;
  }

  /** `n` blocks; the first holds the payments made since the last one. */
  mine(n = 1): void {
    for (let i = 0; i < n; i++) {
      const txs = this.pending;
      this.pending = [];
      this.mineBlock(txs);
    }
  }

  /** Drops the last `depth` blocks with their transactions (not put back to be mined): the next mined blocks form another branch. */
  reorg(depth: number): void {
    for (const block of this.blocks.splice(this.blocks.length - depth, depth)) {
      for (const info of this.infos.get(block.blockID) ?? []) this.undo(this.known.get(info.id)!);
      this.infos.delete(block.blockID);
    }
    this.branch++;
  }

  /** The head block's reference (TaPoS) and time, for a transaction built against this chain. */
  head(): { ref_block_bytes: string; ref_block_hash: string; timestamp: number } {
    const head = this.blocks.at(-1)!;
    return { ref_block_bytes: head.blockID.slice(12, 16), ref_block_hash: head.blockID.slice(16, 32), timestamp: head.block_header.raw_data.timestamp };
  }

  private build(type: string, value: Record<string, unknown>, feeLimit?: number): TronTx {
    const head = this.head();
    // A millisecond apart, so that two equal payments into one block are two transactions.
    const now = head.timestamp + BLOCK_MS + this.pending.length;
    const raw = {
      contract: [{ parameter: { value, type_url: `type.googleapis.com/protocol.${type}` }, type }],
      ref_block_bytes: head.ref_block_bytes,
      ref_block_hash: head.ref_block_hash,
      expiration: now + 60_000,
      timestamp: now,
      ...(feeLimit === undefined ? {} : { fee_limit: feeLimit }),
    };
    const { txID, rawHex, signature } = signTronTransaction(raw, this.payerKey);
    return { txID, raw_data: raw, raw_data_hex: rawHex, signature: [signature], ret: [{ contractRet: 'SUCCESS' }] };
  }

  /** `/wallet/broadcasthex`: a signed Transaction protobuf, checked as a node checks it before it spreads. */
  private broadcastHex(hex: unknown): unknown {
    let parts: { raw: Buffer; signatures: Buffer[] };
    let raw: TronTx['raw_data'];
    let type: string;
    try {
      parts = splitTransaction(Buffer.from(String(hex), 'hex'));
      [type, raw] = decodeRaw(parts.raw.toString('hex'));
    } catch {
      return refusal('OTHER_ERROR', 'transaction cannot be parsed');
    }
    const txID = sha256(parts.raw.toString('hex'));
    if (this.known.has(txID) || this.pending.some((p) => p.tx.txID === txID)) return refusal('DUP_TRANSACTION_ERROR', 'dup transaction');
    const owner = String(raw.contract[0]!.parameter.value.owner_address).toLowerCase();
    if (recoverOwner(txID, parts.signatures[0]) !== owner) return refusal('SIGERROR', 'validate signature error: the signature does not recover the owner address');
    const head = this.head();
    if (raw.expiration <= head.timestamp) return refusal('TRANSACTION_EXPIRATION_ERROR', 'transaction expired');
    if (!this.blocks.some((b) => b.blockID.slice(12, 16) === raw.ref_block_bytes.toLowerCase() && b.blockID.slice(16, 32) === raw.ref_block_hash.toLowerCase())) return refusal('TAPOS_ERROR', 'Tapos check error');
    const value = raw.contract[0]!.parameter.value;
    if (type === 'TransferContract' && (this.trx.get(owner.slice(2)) ?? 0n) < BigInt(value.amount as number)) return refusal('CONTRACT_VALIDATE_ERROR', 'balance is not sufficient');
    const tx: TronTx = { txID, raw_data: raw, raw_data_hex: parts.raw.toString('hex'), signature: parts.signatures.map((b) => b.toString('hex')), ret: [{ contractRet: 'SUCCESS' }] };
    this.pending.push({ tx, revert: false });
    return { result: true, txid: txID };
  }

  /** The node's info of a mined transaction, as it answers it (a test may alter it to play a faulty node). */
  info(txid: string): TronTxInfo {
    return this.known.get(txid)!.info;
  }

  /** TRX of `address` in sun. */
  trxBalance(address: string): bigint {
    return this.trx.get(hex20(address)) ?? 0n;
  }

  private mineBlock(txs: Pending[]): void {
    const parent = this.blocks.at(-1);
    const number = this.blocks.length;
    const timestamp = (parent?.block_header.raw_data.timestamp ?? 1_700_000_000_000) + BLOCK_MS;
    const raw = {
      number,
      txTrieRoot: sha256(txs.map((p) => p.tx.txID).join('') || '00'),
      witness_address: '41' + keccak256(Buffer.from(`witness-${this.branch}`)).slice(-40),
      parentHash: parent?.blockID ?? '0'.repeat(64),
      version: 30,
      timestamp,
    };
    const blockID = number.toString(16).padStart(16, '0') + sha256(Buffer.from(JSON.stringify(raw)).toString('hex')).slice(16);
    const infos = txs.map((p) => this.apply(p, number, timestamp));
    this.blocks.push({ blockID, block_header: { raw_data: raw, witness_signature: randomBytes(65).toString('hex') }, transactions: txs.length ? txs.map((p) => p.tx) : undefined });
    this.infos.set(blockID, infos);
  }

  private apply(p: Pending, blockNumber: number, blockTimeStamp: number): TronTxInfo {
    const info: TronTxInfo = { id: p.tx.txID, blockNumber, blockTimeStamp, contractResult: [''], receipt: { net_usage: 268 } };
    const value = p.tx.raw_data.contract[0]!.parameter.value;
    const from = String(value.owner_address).slice(2).toLowerCase();
    if (p.tx.raw_data.contract[0]!.type === 'TransferContract') {
      const [to, amount] = [String(value.to_address).slice(2).toLowerCase(), BigInt(value.amount as number)];
      this.trx.set(from, (this.trx.get(from) ?? 0n) - amount);
      this.trx.set(to, (this.trx.get(to) ?? 0n) + amount);
    } else {
      const contract = String(value.contract_address).toLowerCase();
      const data = String(value.data);
      const t = { from, to: data.slice(32, 72), amount: BigInt('0x' + (data.slice(72, 136) || '0')) };
      const revert = p.revert || contract !== '41' + hex20(this.usdt) || !data.startsWith(TRANSFER_SELECTOR) || (this.balances.get(from) ?? 0n) < t.amount;
      const energy = (this.balances.get(t.to) ?? 0n) > 0n ? ENERGY_TO_HOLDER : ENERGY_TO_NEW_HOLDER;
      Object.assign(info, { contract_address: contract, fee: energy * SUN_PER_ENERGY });
      info.receipt = { energy_usage_total: energy, energy_fee: energy * SUN_PER_ENERGY, net_usage: 345, result: revert ? 'REVERT' : 'SUCCESS' };
      if (revert) {
        p.tx.ret = [{ contractRet: 'REVERT' }];
        Object.assign(info, { result: 'FAILED', resMessage: Buffer.from('REVERT opcode executed').toString('hex'), contractResult: ['08c379a0'] });
      } else {
        this.balances.set(t.from, (this.balances.get(t.from) ?? 0n) - t.amount);
        this.balances.set(t.to, (this.balances.get(t.to) ?? 0n) + t.amount);
        info.contractResult = [word('1')];
        info.log = [{ address: contract.slice(2), topics: [TRANSFER_TOPIC, word(t.from), word(t.to)], data: word(t.amount.toString(16)) }];
      }
    }
    this.known.set(p.tx.txID, { tx: p.tx, info });
    return info;
  }

  private undo(k: { tx: TronTx; info: TronTxInfo }): void {
    this.known.delete(k.tx.txID);
    const v = k.tx.raw_data.contract[0]!.parameter.value;
    if (k.tx.raw_data.contract[0]!.type === 'TransferContract') {
      const [from, to, amount] = [String(v.owner_address).slice(2), String(v.to_address).slice(2), BigInt(v.amount as number)];
      this.trx.set(from, this.trx.get(from)! + amount);
      this.trx.set(to, this.trx.get(to)! - amount);
    } else if (k.info.log) {
      const [from, to, amount] = [k.info.log[0]!.topics[1]!.slice(24), k.info.log[0]!.topics[2]!.slice(24), BigInt('0x' + k.info.log[0]!.data)];
      this.balances.set(from, this.balances.get(from)! + amount);
      this.balances.set(to, this.balances.get(to)! - amount);
    }
  }

  private answer(path: string, body: Record<string, unknown>): unknown {
    const byNum = (n: unknown) => (Number.isInteger(n) && (n as number) >= 0 ? this.blocks[n as number] : undefined);
    switch (path) {
      case '/wallet/getnowblock':
        return this.blocks.at(-1);
      case '/wallet/getblockbynum':
        return byNum(body.num) ?? {};
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
      case '/wallet/gettransactionfrompending':
        return this.pending.find((p) => p.tx.txID === String(body.value))?.tx ?? {};
      case '/wallet/broadcasthex':
        return this.broadcastHex(body.transaction);
      case '/wallet/getaccount': {
        const sun = this.trx.get(hex20(String(body.address))) ?? 0n;
        return sun > 0n ? { address: body.address, balance: Number(sun) } : {};
      }
      case '/wallet/triggerconstantcontract': {
        if (String(body.function_selector) !== 'balanceOf(address)' || String(body.contract_address) !== this.usdt) return { result: { code: 'CONTRACT_VALIDATE_ERROR' } };
        const owner = String(body.parameter).slice(24).toLowerCase();
        return { result: { result: true }, constant_result: [word((this.balances.get(owner) ?? 0n).toString(16))] };
      }
      case '/wallet/getchainparameters':
        return { chainParameter: [{ key: 'getTransactionFee', value: 1000 }, { key: 'getEnergyFee', value: SUN_PER_ENERGY }, { key: 'getCreateAccountFee', value: 100_000 }] };
      default:
        return { Error: `no such endpoint ${path}` };
    }
  }
}

/**
 * Signs a transaction's raw_data (JSON, hex addresses) with `privateKey` (hex) as a Tron wallet
 * does: txID = sha256 of the raw_data protobuf, a 65-byte r‖s‖v signature of it. `hex` is the
 * whole signed Transaction protobuf, as /wallet/broadcasthex takes it.
 */
export function signTronTransaction(raw: Record<string, unknown>, privateKey: string): { txID: string; rawHex: string; signature: string; hex: string } {
  const pb = utils.transaction.txJsonToPb({ raw_data: raw, visible: false } as never);
  const txID = utils.transaction.txPbToTxID(pb).replace(/^0x/, '');
  const rawHex = utils.transaction.txPbToRawDataHex(pb).toLowerCase();
  const sig = new SigningKey('0x' + privateKey).sign('0x' + txID);
  const signature = sig.r.slice(2) + sig.s.slice(2) + (sig.v - 27).toString(16).padStart(2, '0');
  pb.addSignature(Buffer.from(signature, 'hex'));
  return { txID, rawHex, signature, hex: Buffer.from(pb.serializeBinary()).toString('hex') };
}

/** The hex owner address (41 ‖ 20 bytes) whose key made `signature` (r‖s‖v) of `txID`; '' when none. */
function recoverOwner(txID: string, signature: Buffer | undefined): string {
  if (signature?.length !== 65) return '';
  try {
    const hex = signature.toString('hex');
    const pub = SigningKey.recoverPublicKey('0x' + txID, { r: '0x' + hex.slice(0, 64), s: '0x' + hex.slice(64, 128), v: signature[64]! + 27 });
    return '41' + keccak256('0x' + pub.slice(4)).slice(-40);
  } catch {
    return '';
  }
}

/** The raw_data (field 1) and signatures (field 2) of a Transaction protobuf. */
function splitTransaction(bytes: Buffer): { raw: Buffer; signatures: Buffer[] } {
  let raw: Buffer | null = null;
  const signatures: Buffer[] = [];
  let i = 0;
  const varint = (): number => {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[i++];
      if (b === undefined || shift > 35) throw new Error('truncated');
      n += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return n;
    }
  };
  while (i < bytes.length) {
    const key = varint();
    if ((key & 7) !== 2) throw new Error('unexpected wire type');
    const len = varint();
    const field = bytes.subarray(i, i + len);
    if (field.length !== len) throw new Error('truncated');
    i += len;
    if (key >> 3 === 1) raw = field;
    if (key >> 3 === 2) signatures.push(field);
  }
  if (!raw) throw new Error('no raw_data');
  return { raw, signatures };
}

/** The contract type and raw_data JSON of a raw_data protobuf (the two contract types the stand-in runs). */
function decodeRaw(rawHex: string): [string, TronTx['raw_data']] {
  for (const type of ['TransferContract', 'TriggerSmartContract']) {
    try {
      return [type, utils.deserializeTx.deserializeTransaction(type, rawHex) as TronTx['raw_data']];
    } catch {
      continue;
    }
  }
  throw new Error('unsupported contract');
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
