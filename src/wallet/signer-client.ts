import net from 'node:net';
import type { EntityManager } from 'typeorm';
import { receiveBranchPath, type AddressScheme, type KeyChain } from '../chains/derivation';
import type { SentTransaction } from '../chains/types';
import type { SignedTron, TronContract, TronRefBlock } from '../chains/tron/transaction';
import { MetaEntity } from '../db/entities/team';
import type { Store } from '../db/store';
import type { Logger } from '../shared/logger';
import type { PublicBranchKey } from './child-key';
import type { BranchKeySource } from './hd';
import type { BtcSpend, EvmSpend, SignedBtc } from './spend';
import { MAX_LINE_BYTES, SignerUnavailable, SignRefused, type SignerAnswer, type SignerHello, type SignPurpose, type WireBranchKey } from './signer-protocol';

/** How long a request waits for the signer's answer. */
const ANSWER_MS = 30_000;

/** A Tron transaction to build and sign: the signer builds it itself from these fields. */
export interface TronSpend {
  path: string;
  contract: TronContract;
  ref: TronRefBlock;
  expiresInMs: number;
  feeLimit?: bigint;
}

/** What the daemon's rails ask of the signer (PRODUCT §18): each signature names what it is for. */
export interface RemoteSigner {
  signBitcoin(spend: BtcSpend, purpose: SignPurpose): Promise<SignedBtc>;
  signEvm(chainId: string, items: ReadonlyArray<{ spend: EvmSpend; purpose: SignPurpose }>): Promise<SentTransaction[]>;
  signTron(chainId: string, spend: TronSpend, purpose: SignPurpose): Promise<SignedTron>;
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/**
 * The daemon's side of the signer's socket: one connection, made again on the next request after
 * it dropped. It holds no seed and no key; a request the signer cannot answer (down, restarting)
 * throws SignerUnavailable, one it refuses SignRefused: either way the payout waits.
 */
export class SignerClient implements RemoteSigner {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer = '';
  /** The last request's outcome: whether the signer answered. */
  up = false;
  /** Why it did not, when it did not. */
  lastError: string | null = null;
  /** The fingerprint the signer said it holds at the last `hello`. */
  fingerprint: string | null = null;
  /** The wallet's fingerprint (SignerKeys): a signer holding another seed is not asked to sign. */
  expected: string | null = null;
  /** The connection the last `hello` went over: each new connection is checked before it signs. */
  private helloSocket: net.Socket | null = null;

  constructor(
    readonly socketPath: string,
    private readonly logger: Logger,
  ) {}

  async hello(timeoutMs = ANSWER_MS): Promise<SignerHello> {
    const socket = await this.connect().catch(() => null);
    const h = (await this.request({ op: 'hello' }, timeoutMs)) as SignerHello;
    this.fingerprint = h.fingerprint;
    this.helloSocket = socket;
    return h;
  }

  /** Before a signature: the signer on this connection holds the wallet's seed. */
  private async checked(): Promise<void> {
    if (this.socket === null || this.socket.destroyed || this.helloSocket !== this.socket) await this.hello();
    if (this.expected !== null && this.fingerprint !== this.expected)
      throw new SignerUnavailable(`the signer holds the seed ${this.fingerprint}, not the wallet's ${this.expected}`);
  }

  async branchKeys(paths: string[]): Promise<WireBranchKey[]> {
    return (await this.request({ op: 'branch_keys', paths })) as WireBranchKey[];
  }

  async signBitcoin(spend: BtcSpend, purpose: SignPurpose): Promise<SignedBtc> {
    await this.checked();
    const r = (await this.request({
      op: 'sign_btc',
      chain_id: spend.chain.id,
      purpose,
      spend: {
        coins: spend.coins.map((c) => ({ txid: c.txid, vout: c.vout, value: c.value.toString(), path: c.path })),
        outputs: spend.outputs.map((o) => ({ address: o.address, value: o.value.toString(), ...(o.path ? { path: o.path } : {}) })),
        sequence: spend.sequence,
      },
    })) as SignedBtc;
    return { txid: r.txid, raw: r.raw, vsize: r.vsize };
  }

  async signEvm(chainId: string, items: ReadonlyArray<{ spend: EvmSpend; purpose: SignPurpose }>): Promise<SentTransaction[]> {
    if (items.length === 0) return [];
    await this.checked();
    const r = (await this.request({
      op: 'sign_evm',
      chain_id: chainId,
      items: items.map(({ spend, purpose }) => ({
        purpose,
        spend: {
          path: spend.path,
          nonce: spend.nonce,
          to: spend.to,
          value: spend.value.toString(),
          data: spend.data,
          gas_limit: spend.gasLimit.toString(),
          max_fee_per_gas: spend.maxFeePerGas.toString(),
          max_priority_fee_per_gas: spend.maxPriorityFeePerGas.toString(),
          legacy: spend.legacy,
        },
      })),
    })) as SentTransaction[];
    if (r.length !== items.length) throw new Error('the signer answered a different number of transactions');
    return r.map((s) => ({ txid: s.txid, raw: s.raw }));
  }

  async signTron(chainId: string, spend: TronSpend, purpose: SignPurpose): Promise<SignedTron> {
    await this.checked();
    const r = (await this.request({
      op: 'sign_tron',
      chain_id: chainId,
      purpose,
      spend: { path: spend.path, contract: spend.contract, ref: spend.ref, expires_in_ms: spend.expiresInMs, fee_limit: spend.feeLimit?.toString() },
    })) as SignedTron;
    return { txid: r.txid, raw: r.raw, expiration: Number(r.expiration) };
  }

  /** Drops the connection (the next request connects again). */
  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private async request(body: Record<string, unknown>, timeoutMs = ANSWER_MS): Promise<unknown> {
    let socket: net.Socket;
    try {
      socket = await this.connect();
    } catch (err) {
      this.markDown(err instanceof Error ? err.message : String(err));
      throw new SignerUnavailable(this.lastError!);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new SignerUnavailable(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.write(JSON.stringify({ id, ...body }) + '\n');
    });
  }

  private connect(): Promise<net.Socket> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(this.socketPath);
      s.setEncoding('utf8');
      s.once('connect', () => {
        this.socket = s;
        this.buffer = '';
        this.connecting = null;
        resolve(s);
      });
      s.on('error', (err) => {
        this.connecting = null;
        reject(err);
      });
      s.on('close', () => {
        if (this.socket === s) this.socket = null;
        this.connecting = null;
        this.markDown('the connection closed');
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(new SignerUnavailable('the connection closed before the answer'));
          this.pending.delete(id);
        }
      });
      s.on('data', (chunk: string) => this.onData(chunk));
    });
    return this.connecting;
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.socket?.destroy();
      return;
    }
    for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let a: SignerAnswer;
      try {
        a = JSON.parse(line) as SignerAnswer;
      } catch {
        continue;
      }
      const p = this.pending.get(a.id);
      if (!p) continue;
      this.pending.delete(a.id);
      clearTimeout(p.timer);
      if (!this.up) this.logger.info('signer reachable', { socket: this.socketPath });
      this.up = true;
      this.lastError = null;
      if (a.ok) p.resolve(a.result);
      else if (a.error.code === 'internal') p.reject(new Error(`the signer failed: ${a.error.reason}`));
      else {
        const [code, ...rest] = a.error.reason.split(': ');
        p.reject(new SignRefused(code ?? a.error.code, rest.join(': ') || a.error.reason));
      }
    }
  }

  /**
   * Said once when a signer that answered stops answering. Before it ever answered (a child still
   * starting) nothing is said here: the daemon's start waits for it and says so if it gives up.
   */
  private markDown(reason: string): void {
    if (this.up) this.logger.warn('signer not reachable; payouts wait', { socket: this.socketPath, reason });
    this.up = false;
    this.lastError = reason;
  }
}

const KEY_PREFIX = 'branch_key:';
const FINGERPRINT_KEY = 'signer_fingerprint';

/**
 * The public keys of the wallet's branches as the daemon knows them (BranchKeySource): asked of the
 * signer once and kept in the `meta` table (public keys, not secrets), so that addresses are derived
 * while the signer is down. `branchKey` answers from memory only: `ensure` loads first.
 */
export class SignerKeys implements BranchKeySource {
  private readonly keys = new Map<string, PublicBranchKey>();
  private known: string | null = null;

  constructor(
    private readonly store: Store,
    private readonly client: SignerClient,
  ) {}

  get knownFingerprint(): string | null {
    return this.known;
  }

  get fingerprint(): string {
    if (this.known === null) throw new Error('the wallet fingerprint is not known yet');
    return this.known;
  }

  /** Loads every stored key and the fingerprint; with the signer up, checks it holds the same seed. */
  async load(): Promise<void> {
    const rows = await this.store.read
      .createQueryBuilder(MetaEntity, 'm')
      .where('m.key LIKE :p', { p: `${KEY_PREFIX}%` })
      .getMany();
    for (const r of rows) {
      const v = JSON.parse(r.value) as { public_key: string; chain_code: string };
      this.keys.set(r.key.slice(KEY_PREFIX.length), { publicKey: Buffer.from(v.public_key, 'hex'), chainCode: Buffer.from(v.chain_code, 'hex') });
    }
    this.known = (await this.store.read.findOneBy(MetaEntity, { key: FINGERPRINT_KEY }))?.value ?? null;
    this.client.expected = this.known;
  }

  /** Checks the signer's seed against the one the keys were taken from (and records it the first time). */
  async checkSigner(timeoutMs?: number): Promise<void> {
    const { fingerprint } = await this.client.hello(timeoutMs);
    if (this.known === null) {
      await this.store.write((em) =>
        em.createQueryBuilder().insert().into(MetaEntity).values({ key: FINGERPRINT_KEY, value: fingerprint }).orIgnore().execute(),
      );
      this.known = (await this.store.read.findOneByOrFail(MetaEntity, { key: FINGERPRINT_KEY })).value;
    }
    this.client.expected = this.known;
    if (fingerprint !== this.known) throw new Error(`the signer holds the seed ${fingerprint}, not the wallet's ${this.known}: it is not used`);
  }

  has(path: string): boolean {
    return this.keys.has(path);
  }

  /** Makes sure the keys of `paths` are known (from the signer when not stored yet). */
  async ensure(paths: readonly string[], within?: EntityManager): Promise<void> {
    const missing = [...new Set(paths)].filter((p) => !this.keys.has(p));
    if (missing.length === 0) return;
    if (this.known === null) await this.checkSigner();
    const got = await this.client.branchKeys(missing);
    // In the caller's transaction when there is one (SQLite's write lock is not taken twice).
    const write = (fn: (em: EntityManager) => Promise<void>) => (within ? fn(within) : this.store.write(fn));
    await write(async (em) => {
      for (const k of got)
        await em
          .createQueryBuilder()
          .insert()
          .into(MetaEntity)
          .values({ key: KEY_PREFIX + k.path, value: JSON.stringify({ public_key: k.public_key, chain_code: k.chain_code }) })
          .orIgnore()
          .execute();
    });
    for (const k of got) this.keys.set(k.path, { publicKey: Buffer.from(k.public_key, 'hex'), chainCode: Buffer.from(k.chain_code, 'hex') });
  }

  branchKey(scheme: AddressScheme, account: number, keyChain: KeyChain = 0): PublicBranchKey {
    const path = receiveBranchPath(scheme, account, keyChain);
    const key = this.keys.get(path);
    if (!key) throw new SignerUnavailable(`the public key of branch ${path} is not known yet (the signer gives it)`);
    return key;
  }
}
