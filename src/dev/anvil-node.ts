import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { httpRequest } from '../shared/http-request';
import { freePort } from './ports';

/** Anvil's own well-known test mnemonic, passed explicitly so the funded accounts never change. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
export const ANVIL_CHAIN_ID = 31337;

const STARTUP_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;

/** Whether process `pid` holds the socket listening on 127.0.0.1:`port` (the anvil binary is Linux's: /proc). */
function listensOn(pid: number, port: number): boolean {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  // /proc/net/tcp: local address is the 2nd field, the state the 4th (0A: listening), the socket's inode the 10th.
  const inodes = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1] === local && f[3] === '0A')
    .map((f) => `socket:[${f[9]}]`);
  if (inodes.length === 0) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => inodes.includes(readlinkSync(`/proc/${pid}/fd/${fd}`)));
  } catch {
    // The process ended, or one of its descriptors closed meanwhile: the next look tells.
    return false;
  }
}

let pdeathsig: string[] | undefined;

/**
 * The launcher that ties anvil's life to this process's: util-linux's setpriv, which sets the
 * parent-death signal and execs anvil (the same pid). When the process that started anvil ends in
 * any way, kill -9 included, the kernel sends anvil SIGTERM: it writes its state file and exits.
 * Without setpriv (or one too old to know --pdeathsig) anvil runs as is, stopped at this process's
 * exit only when that exit runs its handlers.
 */
function launcher(): string[] {
  if (pdeathsig === undefined) {
    const probe = spawnSync('setpriv', ['--help'], { encoding: 'utf8', timeout: 5000 });
    pdeathsig = probe.status === 0 && probe.stdout.includes('--pdeathsig') ? ['setpriv', '--pdeathsig', 'SIGTERM', '--'] : [];
  }
  return pdeathsig;
}

/** anvil's command line behind the launcher: [file, args]. */
function command(args: string[]): [string, string[]] {
  const [first, ...rest] = [...launcher(), anvilBinary(), ...args];
  return [first!, rest];
}

export const anvilBinary = (): string => path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');

export interface AnvilOptions {
  /** 0 (default): a free port, read back from anvil's own startup line (quiet: found before anvil starts). */
  port?: number;
  /** Load the chain from this file at start and write it back at a clean stop. */
  stateFile?: string;
  /** Default ANVIL_CHAIN_ID. */
  chainId?: number;
  /**
   * No log of every request (benchmarks): its log of batched balance calls cost anvil as much CPU
   * again, and the process draining it more than the calls' own client work. Anvil then prints
   * nothing, not even its port: it is started on a free port and waited for until it listens.
   */
  quiet?: boolean;
}

/**
 * A local anvil node on 127.0.0.1 as a child process: `coinkeep dev` and the integration tests start
 * it, mine on demand and stop it. Anvil mines a block for every transaction it receives.
 */
export class AnvilNode {
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    readonly options: AnvilOptions,
  ) {
    // A node must not outlive the process that started it, whatever way that process ends.
    const killOnExit = () => child.kill('SIGKILL');
    process.on('exit', killOnExit);
    child.once('exit', () => {
      this.exited = true;
      process.off('exit', killOnExit);
    });
  }

  get rpcUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  static async start(options: AnvilOptions = {}): Promise<AnvilNode> {
    const args = (port: number) => [
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--mnemonic',
      ANVIL_MNEMONIC,
      '--chain-id',
      String(options.chainId ?? ANVIL_CHAIN_ID),
      ...(options.stateFile ? ['--state', options.stateFile] : []),
    ];
    if (options.quiet) {
      const port = options.port || (await freePort());
      return AnvilNode.startQuiet(port, [...args(port), '--quiet'], options);
    }
    const child = spawn(...command(args(options.port ?? 0)), { stdio: ['ignore', 'pipe', 'pipe'] });
    const port = await new Promise<number>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => fail(new Error(`anvil did not start within ${STARTUP_TIMEOUT_MS} ms`)), STARTUP_TIMEOUT_MS);
      const onData = (d: Buffer) => {
        output += d.toString('utf8');
        const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
        if (!m) return;
        clearTimeout(timer);
        resolve(Number(m[1]));
      };
      const onExit = (code: number | null) => fail(new Error(`anvil exited at start (code ${code}): ${output.trim().split('\n').slice(-3).join(' | ')}`));
      function fail(err: Error) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(err);
      }
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', onExit);
      child.once('error', (err) => fail(err));
    });
    // Anvil logs every request: keep its pipes drained so it never blocks on a full pipe.
    child.stdout!.removeAllListeners('data').resume();
    child.stderr!.removeAllListeners('data').resume();
    child.removeAllListeners('exit');
    return new AnvilNode(child, port, options);
  }

  /**
   * Anvil with `--quiet` on `port`, once it listens there itself: a port found free can be taken
   * before anvil binds it, and then another server would answer on it.
   */
  private static async startQuiet(port: number, args: string[], options: AnvilOptions): Promise<AnvilNode> {
    const child = spawn(...command(args), { stdio: 'ignore' });
    let spawnError: Error | null = null;
    child.once('error', (err) => (spawnError = err));
    const node = new AnvilNode(child, port, options);
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (!(child.pid !== undefined && listensOn(child.pid, port))) {
      if (spawnError) throw spawnError;
      if (node.exited) throw new Error(`anvil exited at start (code ${child.exitCode}): port ${port} taken?`);
      if (Date.now() > deadline) {
        await node.kill();
        throw new Error(`anvil did not listen on port ${port} within ${STARTUP_TIMEOUT_MS} ms`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return node;
  }

  async rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const res = await httpRequest(this.rpcUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = JSON.parse(res.text) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`anvil ${method}: ${body.error.message}`);
    return body.result as T;
  }

  /** Mines `blocks` empty blocks at once. */
  async mine(blocks = 1): Promise<void> {
    await this.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
  }

  async blockNumber(): Promise<number> {
    return Number(await this.rpc<string>('eth_blockNumber'));
  }

  /** A clean stop: anvil writes its state file (when it has one) and exits. */
  async stop(): Promise<void> {
    await this.end('SIGINT');
  }

  /** kill -9: no state written, no goodbye. */
  async kill(): Promise<void> {
    await this.end('SIGKILL');
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await gone;
    clearTimeout(timer);
  }
}
