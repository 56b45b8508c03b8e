import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { btcNetwork } from '../chains/btc/derive';
import { BitcoinRpc } from '../chains/btc/rpc';
import { RegtestPayer, type RegtestOutput } from './regtest-payer';
import { freePort } from './ports';

const STARTUP_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const RPC_TIMEOUT_MS = 60_000;
/** Blocks per mining request while preparing the chain: one BIP9 signalling period on regtest. */
const PERIOD = 144;
/** The payer needs mature rewards (100 blocks deep) to pay from. */
const MATURE_HEIGHT = 200;

/**
 * bcoin's regtest address parameters (STACK.md: they differ from Bitcoin Core's regtest), as a btc
 * chain's `options` override the `regtest` preset.
 */
export const BCOIN_REGTEST_OPTIONS = { bech32: 'rb', pub_key_hash: 0x3c, script_hash: 0x26, wif: 0x5a } as const;

/** The sandbox payer on a bcoin regtest node. */
export const bcoinPayer = (): RegtestPayer => new RegtestPayer(btcNetwork({ network: 'regtest', options: BCOIN_REGTEST_OPTIONS }));

export interface BcoinOptions {
  /** Keep the chain in this directory across starts; without it, all in memory (tests). */
  dataDir?: string;
  /**
   * Start from a copy of this prepared chain (a data dir of a node stopped cleanly), in a temporary
   * directory removed with the node: the tests' nodes skip mining the chain up each time.
   */
  copyOf?: string;
  /** Apply mainnet's standardness policy to the mempool (regtest relays non-standard transactions otherwise). */
  requireStandard?: boolean;
  /** Where the HTTP port comes from (default: one free now); a test of the retry hands out a taken one. */
  pickPort?: () => Promise<number>;
}

/**
 * A bcoin 1.0.2 regtest full node on 127.0.0.1 as a child process, without its wallet (the sandbox
 * payer signs its own payments): `coinkeep dev` and the integration tests start it, pay, mine, and
 * stop it by its pid. It starts with segwit active and mature rewards for the payer.
 */
export class BcoinNode {
  private exited = false;
  /** The child's end with its output read to the last byte (its exit can come first). */
  private readonly closed: Promise<void>;
  readonly rpc: BitcoinRpc;
  readonly payer = bcoinPayer();

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly apiKey: string,
    private readonly tempDir: string | null,
  ) {
    child.once('exit', () => (this.exited = true));
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    this.rpc = new BitcoinRpc(this.rpcUrl, RPC_TIMEOUT_MS);
  }

  /** The node's JSON-RPC, with the API key as the basic-auth password (as a chain's `rpc_url`). */
  get rpcUrl(): string {
    return `http://x:${this.apiKey}@127.0.0.1:${this.port}/`;
  }

  static async start(options: BcoinOptions = {}): Promise<BcoinNode> {
    // The port is found free, then bcoin binds it: another process can take it in between (a busy
    // test run starts many listeners), and bcoin exits with EADDRINUSE. Then a new port, a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await BcoinNode.startOnce(options);
      } catch (err) {
        if (!(err instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw err;
      }
    }
  }

  private static async startOnce(options: BcoinOptions): Promise<BcoinNode> {
    const tempDir = options.dataDir ? null : mkdtempSync(path.join(os.tmpdir(), 'coinkeep-bcoin-'));
    if (tempDir && options.copyOf) cpSync(options.copyOf, tempDir, { recursive: true });
    const onDisk = options.dataDir !== undefined || options.copyOf !== undefined;
    const port = await (options.pickPort ?? freePort)();
    const apiKey = randomBytes(16).toString('hex');
    const args = [
      '-e',
      WATCHDOG,
      'bcoin',
      '--network=regtest',
      `--prefix=${options.dataDir ?? tempDir}`,
      `--memory=${onDisk ? 'false' : 'true'}`,
      '--no-wallet=true',
      // No transaction index, as Bitcoin Core runs by default: a mined transaction is found only in its block.
      '--index-tx=false',
      // Accept transactions that signal replaceability (BIP125), as the wallet's payouts do.
      '--replace-by-fee=true',
      ...(options.requireStandard ? ['--require-standard=true'] : []),
      '--workers=false',
      '--listen=false',
      '--http-host=127.0.0.1',
      `--http-port=${port}`,
      `--api-key=${apiKey}`,
      '--log-level=error',
      '--log-file=false',
    ];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
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

  async height(): Promise<number> {
    return this.rpc.call<number>('getblockcount');
  }

  /** Mines `blocks` blocks (the mempool included); returns their hashes. */
  mine(blocks = 1): Promise<string[]> {
    return this.payer.mine(this.rpc, blocks);
  }

  /** Pays `outputs` in one transaction from the payer; returns its txid (it waits in the mempool). */
  pay(outputs: RegtestOutput[]): Promise<string> {
    return this.payer.pay(this.rpc, outputs);
  }

  /** Takes the block out of the best chain with its descendants; bcoin drops its transactions. */
  async invalidateBlock(hash: string): Promise<void> {
    await this.rpc.call('invalidateblock', [hash]);
  }

  mempool(): Promise<string[]> {
    return this.rpc.call<string[]>('getrawmempool', [false]);
  }

  /** A clean stop (SIGTERM): a node with a data dir keeps its chain for the next start. */
  async stop(): Promise<void> {
    await this.end('SIGTERM');
  }

  /** kill -9 by pid. */
  async kill(): Promise<void> {
    await this.end('SIGKILL');
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const pid = this.child.pid;
    if (!this.exited && pid !== undefined) {
      const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      process.kill(pid, signal);
      const timer = setTimeout(() => !this.exited && process.kill(pid, 'SIGKILL'), STOP_TIMEOUT_MS);
      await gone;
      clearTimeout(timer);
    }
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }

  private async waitReady(output: () => string): Promise<void> {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      if (this.exited) {
        await this.closed;
        if (output().includes('EADDRINUSE')) throw new PortTaken(`bcoin exited at start: port ${this.port} is taken (EADDRINUSE)`);
        throw new Error(`bcoin exited at start: ${lastLines(output())}`);
      }
      try {
        await this.height();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`bcoin did not answer within ${STARTUP_TIMEOUT_MS} ms: ${lastLines(output()) || String(err)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** Mines until segwit is active (STACK.md: bcoin's regtest activates it late) and the payer has mature rewards. */
  private async prepareChain(): Promise<void> {
    for (;;) {
      const info = await this.rpc.call<{ blocks: number; bip9_softforks: { segwit?: { status: string } } }>('getblockchaininfo');
      if (info.bip9_softforks.segwit?.status === 'active' && info.blocks >= MATURE_HEIGHT) return;
      await this.mine(PERIOD);
    }
  }
}

/** How many ports a start tries when the one found free is taken before bcoin binds it. */
const PORT_ATTEMPTS = 4;

class PortTaken extends Error {}

const bcoinBinary = (): string => path.join(path.dirname(require.resolve('bcoin/package.json')), 'bin', 'node');

/**
 * bcoin's own launcher, run so that it exits when the process that started it is gone (its stdin,
 * a pipe from that process, ends): a test worker or `coinkeep dev` killed with -9 leaves no node.
 */
const WATCHDOG = `process.stdin.on('end', () => process.exit(0)).resume(); require(${JSON.stringify(bcoinBinary())});`;

const lastLines = (output: string): string => output.trim().split('\n').slice(-3).join(' | ');
