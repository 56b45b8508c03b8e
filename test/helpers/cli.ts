/**
 * The CLI as a user runs it: bin/coinkeep (and bin/coinkeepd) as child processes with a temp data
 * dir and a temp config (127.0.0.1, port 0, fixed rates, no chains, log level error unless told).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { pollPauses } from './poll';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..', '..');
export const COINKEEP_BIN = path.join(PROJECT_ROOT, 'bin', 'coinkeep');
export const COINKEEPD_BIN = path.join(PROJECT_ROOT, 'bin', 'coinkeepd');
/** The crash tests' daemon (crashing-daemon.ts, compiled). */
const CRASHING_DAEMON = path.join(PROJECT_ROOT, 'dist', 'test', 'helpers', 'crashing-daemon.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed when the call had --json and succeeded. */
  json: any;
  ms: number;
}

export interface CliOptions {
  timeoutMs?: number;
  env?: Record<string, string | undefined>;
  /** Leave out the --config flag (the call names its own, or none). */
  noConfig?: boolean;
}

/** The environment every child gets: no inherited Coinkeep settings, no colours. */
function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.COINKEEP_CONFIG;
  delete env.COINKEEP_MASTER_KEY;
  delete env.NODE_OPTIONS;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** The fixed rates of every test config (fiat per coin). */
export const FIXED_RATES = {
  BTC: { USD: '68000', EUR: '63000' },
  ETH: { USD: '3400', EUR: '3150' },
};

/** A config for tests as YAML would hold it: temp data dir, port 0, fixed rates, no chains; `overrides` merge on top. */
export function testCliConfig(dataDir: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    network: 'testnet',
    data_dir: dataDir,
    listen: { host: '127.0.0.1', port: 0 },
    base_url: 'http://127.0.0.1:8420',
    database: { url: `sqlite:${path.join(dataDir, 'coinkeep.db')}` },
    log_level: 'error',
    chains: [],
    rates: { sources: [{ kind: 'fixed', rates: FIXED_RATES }] },
    fiat: { enabled: ['USD', 'EUR', 'JPY'], default: 'USD' },
    webhooks: { allow_private_targets: true },
    ...overrides,
  };
}

/** A temp folder holding a config file and (under it) the data dir; `run` calls bin/coinkeep with it. */
export class CliEnv {
  readonly dir: string;
  readonly dataDir: string;
  readonly configFile: string;
  private readonly children = new Set<ChildProcess>();

  constructor(overrides: Record<string, unknown> = {}) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-cli-'));
    this.dataDir = path.join(this.dir, 'data');
    this.configFile = path.join(this.dir, 'coinkeep.yaml');
    this.writeConfig(overrides);
  }

  writeConfig(overrides: Record<string, unknown> = {}): void {
    writeFileSync(this.configFile, YAML.stringify(testCliConfig(this.dataDir, overrides)));
  }

  /** Runs `coinkeep --config FILE ...args` to its end. */
  run(args: string[], opts: CliOptions = {}): Promise<CliResult> {
    return runBin(COINKEEP_BIN, opts.noConfig ? args : ['--config', this.configFile, ...args], opts);
  }

  /** Starts a long-running command (run, dev, logs -f); the caller ends it. Killed in cleanup(). */
  spawn(bin: string, args: string[], opts: CliOptions = {}): Running {
    const child = spawn(process.execPath, [bin, ...(opts.noConfig ? args : ['--config', this.configFile, ...args])], {
      cwd: this.dir,
      env: childEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return new Running(child);
  }

  /** Starts bin/coinkeepd on this env's config; resolves once it serves, with its API address. */
  async spawnDaemon(opts: CliOptions = {}): Promise<{ child: Running; url: string }> {
    return this.serving(this.spawn(COINKEEPD_BIN, [], opts));
  }

  /** The daemon on this env's config that kills itself (kill -9) when a payout first reaches `crashAt`. */
  async spawnCrashingDaemon(crashAt: 'signed' | 'stored' | 'sent'): Promise<{ child: Running; url: string }> {
    return this.serving(this.spawn(CRASHING_DAEMON, ['--crash-at', crashAt]));
  }

  private async serving(child: Running): Promise<{ child: Running; url: string }> {
    // A start with its signer child, on a loaded machine, can take many seconds: the deadline only bounds a hang.
    const url = (await child.waitFor(/"api_url":"(http:\/\/127\.0\.0\.1:\d+)"/, 90_000))[1]!;
    return { child, url };
  }

  /** Stops whatever is still running from this env (by its own pids), then removes the folder. */
  async cleanup(): Promise<void> {
    for (const c of this.children) c.kill('SIGKILL');
    await this.run(['stop'], { timeoutMs: 15000 }).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A child process whose output is collected as it comes. */
export class Running {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Resolves once stdout matches, or rejects at the deadline (with what was printed). */
  async waitFor(re: RegExp, timeoutMs = 15000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.stdout.match(re);
      if (m) return m;
      if (this.child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`no ${re} in output (exit ${this.child.exitCode}):\n${this.stdout}\n${this.stderr}`);
      }
      await sleep(25);
    }
  }

  /** Sends a signal and waits for the exit; measures how long it took. */
  async stop(signal: NodeJS.Signals, timeoutMs = 15000): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const t0 = Date.now();
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const r = await this.exited;
    clearTimeout(timer);
    return { ...r, ms: Date.now() - t0 };
  }
}

export function runBin(bin: string, args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      let json: unknown;
      if (args.includes('--json') && code === 0) {
        try {
          json = JSON.parse(stdout);
        } catch {
          return reject(new Error(`--json output is not one JSON object: ${stdout}`));
        }
      }
      resolve({ code, signal, stdout, stderr, json, ms: Date.now() - t0 });
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value, or throws at the deadline. */
/**
 * After a daemon restarted from a crash (kill -9) every signature timestamped up to its start's
 * second is refused as a replay (the replay guard was not saved): waits until the clock is in a
 * later second, so the next signed request is fresh.
 */
export async function pastStartSecond(startedBy = Date.now()): Promise<void> {
  const second = Math.floor(startedBy / 1000);
  await until(() => Math.floor(Date.now() / 1000) > second, 2000, 'the next second');
}

export async function until<T>(fn: () => Promise<T> | T, timeoutMs = 10000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  const pause = pollPauses();
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause();
  }
}
