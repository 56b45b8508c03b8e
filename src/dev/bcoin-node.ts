import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const STARTUP_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
/** Blocks per mining request while preparing the chain: one BIP9 signalling period on regtest. */
const PERIOD = 144;
/** Coinbase outputs spend after 100 blocks: the wallet needs some mature ones to pay from. */
const MATURE_HEIGHT = 200;

/**
 * bcoin's regtest address parameters (STACK.md: they differ from Bitcoin Core's regtest), as a btc
 * chain's `options` override the `regtest` preset.
 */
export const BCOIN_REGTEST_OPTIONS = { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a } as const;

export interface BcoinOptions {
  /** Keep the chain and wallet in this directory across starts; without it, all in memory (tests). */
  dataDir?: string;
}

/** One output of a wallet payment: satoshi, so two outputs may pay the same address. */
export interface BcoinOutput {
  address: string;
  value: bigint;
}

/**
 * A bcoin 1.0.2 regtest full node with its wallet, on 127.0.0.1 as a child process: `coinkeep dev`
 * and the integration tests start it, pay from its wallet, mine, and stop it by its pid. The wallet's
 * HTTP server listens on the node's RPC port + 1, so a chain's `rpc_url` is enough to pay through it.
 */
export class BcoinNode {
  private exited = false;
  private minerAddress: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly apiKey: string,
    private readonly tempDir: string | null,
  ) {
    child.once('exit', () => (this.exited = true));
  }

  /** The node's JSON-RPC, with the API key as the basic-auth password (as a chain's `rpc_url`). */
  get rpcUrl(): string {
    return `http://x:${this.apiKey}@127.0.0.1:${this.port}/`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exited;
  }

  static async start(options: BcoinOptions = {}): Promise<BcoinNode> {
    const tempDir = options.dataDir ? null : mkdtempSync(path.join(os.tmpdir(), 'coinkeep-bcoin-'));
    const port = await freePortPair();
    const apiKey = randomBytes(16).toString('hex');
    const args = [
      bcoinBinary(),
      '--network=regtest',
      `--prefix=${options.dataDir ?? tempDir}`,
      `--memory=${options.dataDir ? 'false' : 'true'}`,
      '--index-tx=true',
      '--workers=false',
      '--listen=false',
      '--http-host=127.0.0.1',
      `--http-port=${port}`,
      '--wallet-http-host=127.0.0.1',
      `--wallet-http-port=${port + 1}`,
      `--api-key=${apiKey}`,
      '--log-level=error',
      '--log-file=false',
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (d: Buffer) => (output = (output + d.toString('utf8')).slice(-4000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const node = new BcoinNode(child, port, apiKey, tempDir);
    try {
      await node.waitReady(() => output);
      await node.prepareChain();
    } catch (err) {
      await node.kill();
      throw err;
    }
    return node;
  }

  /** A call to the node's JSON-RPC. */
  rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return this.post<T>(this.port, '/', { method, params });
  }

  /** A call to the wallet's JSON-RPC (getaccountaddress, getbalance...). */
  walletRpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return this.post<T>(this.port + 1, '/', { method, params });
  }

  async height(): Promise<number> {
    return this.rpc<number>('getblockcount');
  }

  /** Mines `blocks` blocks to the wallet (what it pays from), mempool included; returns their hashes. */
  async mine(blocks = 1): Promise<string[]> {
    this.minerAddress ??= await this.walletRpc<string>('getaccountaddress', ['default']);
    return this.rpc<string[]>('generatetoaddress', [blocks, this.minerAddress]);
  }

  /** Pays `outputs` in one transaction from the wallet; returns its txid (it waits in the mempool). */
  async pay(outputs: BcoinOutput[]): Promise<string> {
    return payFromWallet(this.rpcUrl, outputs);
  }

  /** Takes the block out of the best chain with its descendants; its transactions are dropped. */
  async invalidateBlock(hash: string): Promise<void> {
    await this.rpc('invalidateblock', [hash]);
  }

  async mempool(): Promise<string[]> {
    return this.rpc<string[]>('getrawmempool');
  }

  /** A clean stop (SIGTERM): a node with a data dir keeps its chain and wallet for the next start. */
  async stop(): Promise<void> {
    await this.end('SIGTERM');
  }

  /** kill -9 by pid. */
  async kill(): Promise<void> {
    await this.end('SIGKILL');
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    if (!this.exited && this.child.pid !== undefined) {
      const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      process.kill(this.child.pid, signal);
      const timer = setTimeout(() => !this.exited && process.kill(this.child.pid!, 'SIGKILL'), STOP_TIMEOUT_MS);
      await gone;
      clearTimeout(timer);
    }
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }

  private async waitReady(output: () => string): Promise<void> {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      if (this.exited) throw new Error(`bcoin exited at start: ${lastLines(output())}`);
      try {
        await this.walletRpc('getbalance');
        await this.rpc('getblockcount');
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`bcoin did not answer within ${STARTUP_TIMEOUT_MS} ms: ${lastLines(output()) || String(err)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** Mines until segwit is active (STACK.md: bcoin's regtest activates it late) and the wallet has mature coins. */
  private async prepareChain(): Promise<void> {
    for (;;) {
      const info = await this.rpc<{ blocks: number; bip9_softforks: { segwit?: { status: string } } }>('getblockchaininfo');
      if (info.bip9_softforks.segwit?.status === 'active' && info.blocks >= MATURE_HEIGHT) return;
      await this.mine(PERIOD);
    }
  }

  private post<T>(port: number, target: string, body: unknown): Promise<T> {
    return postJson<T>(`http://127.0.0.1:${port}${target}`, this.apiKey, body);
  }
}

/**
 * Pays `outputs` from the wallet of the bcoin node at `rpcUrl` (a sandbox chain's `rpc_url`); the
 * wallet listens on the next port. Returns the txid.
 */
export async function payFromWallet(rpcUrl: string, outputs: BcoinOutput[]): Promise<string> {
  const url = new URL(rpcUrl);
  const apiKey = decodeURIComponent(url.password);
  const walletPort = Number(url.port) + 1;
  const sent = await postJson<{ hash: string }>(`http://127.0.0.1:${walletPort}/wallet/primary/send`, apiKey, {
    outputs: outputs.map((o) => ({ address: o.address, value: Number(o.value) })),
  });
  return sent.hash;
}

/** Mines `blocks` blocks on the bcoin node at `rpcUrl` to its wallet. */
export async function mineOn(rpcUrl: string, blocks: number): Promise<void> {
  const url = new URL(rpcUrl);
  const apiKey = decodeURIComponent(url.password);
  const port = Number(url.port);
  const address = await postJson<string>(`http://127.0.0.1:${port + 1}/`, apiKey, { method: 'getaccountaddress', params: ['default'] });
  await postJson(`http://127.0.0.1:${port}/`, apiKey, { method: 'generatetoaddress', params: [blocks, address] });
}

async function postJson<T>(url: string, apiKey: string, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`x:${apiKey}`).toString('base64')}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  const isRpc = typeof body === 'object' && body !== null && 'method' in body;
  if (isRpc) {
    const error = parsed.error as { message?: string } | null | undefined;
    if (error) throw new Error(`bcoin ${(body as { method: string }).method}: ${error.message ?? 'error'}`);
    return parsed.result as T;
  }
  if (!res.ok) throw new Error(`bcoin ${new URL(url).pathname}: HTTP ${res.status} ${(parsed.error as { message?: string } | undefined)?.message ?? ''}`.trim());
  return parsed as T;
}

export const bcoinBinary = (): string => path.join(path.dirname(require.resolve('bcoin/package.json')), 'bin', 'node');

/** A free port whose successor is free too (the node's RPC and its wallet's HTTP server). */
async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await listenFree(0);
    if (port < 65535 && (await listenFree(port + 1).then(() => true, () => false))) return port;
  }
  throw new Error('no free pair of ports on 127.0.0.1');
}

function listenFree(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

const lastLines = (output: string): string => output.trim().split('\n').slice(-3).join(' | ');
