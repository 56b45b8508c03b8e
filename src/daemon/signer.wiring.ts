import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PROJECT_ROOT } from '../config/load';
import type { Config } from '../config/schema';
import type { Store } from '../db/store';
import type { Logger } from '../shared/logger';
import { UserError } from '../shared/errors';
import { SignerClient, SignerKeys } from '../wallet/signer-client';
import type { SignerStatusView } from '../admin/contract';
import type { DaemonModule } from './module';
import { defaultSignerSocketPath } from './paths';

/** How the signer runs: started by this daemon as a child, run apart (`signer.socket`), or (tests) in this process. */
export type SignerMode = 'child' | 'socket' | 'in_process';

/** What `coinkeep status`, the dashboard and the metrics say of the signer. */
export type SignerStatus = SignerStatusView;

/** Tests: runs the signer server in this process on `socketPath` (same socket protocol, same checks) instead of a child. */
export type InProcessSigner = (socketPath: string) => Promise<{ close(): Promise<void> }>;

/** How often the daemon asks the signer whether it is there (its status between payouts). */
const PING_MS = 5000;
/** Restart backoff of the child: doubled from the first up to the last. */
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000, 30000];
/** How long the daemon's start waits for its signer. */
const START_WAIT_MS = 30_000;
/** How long a start with the keys stored waits for its child before it goes on without it. */
const KNOWN_WAIT_MS = 10_000;

export interface SignerWiringDeps {
  config: Config;
  store: Store;
  logger: Logger;
  signal: AbortSignal;
  inProcess?: InProcessSigner;
  /** The branch paths whose public keys the daemon keeps at hand (AddressService.branchPaths). */
  branchPaths: () => Promise<string[]>;
}

/**
 * The daemon's side of custody (PRODUCT §18): the signer's client and the public keys it gave, and
 * the signer itself, supervised: a child `coinkeep signer` started again with backoff when it ends,
 * or a socket run apart. The daemon never opens the seed; while the signer is down payouts wait and
 * the status says so.
 */
export function createSigner(deps: SignerWiringDeps) {
  const { config, logger } = deps;
  const log = logger.child({ component: 'signer' });
  const mode: SignerMode = deps.inProcess ? 'in_process' : config.signer.socket ? 'socket' : 'child';
  const socketPath = config.signer.socket ?? defaultSignerSocketPath(config.data_dir);
  const client = new SignerClient(socketPath, log);
  const keys = new SignerKeys(deps.store, client);
  let child: ChildProcess | null = null;
  let restarts = 0;
  let stopped = false;
  let inProcess: { close(): Promise<void> } | null = null;
  let restartTimer: NodeJS.Timeout | null = null;
  /** The child's last error line, and how many times it ended: a first start fails at once with it. */
  let lastChildError: string | null = null;
  let exits = 0;

  const spawnChild = (): void => {
    if (stopped) return;
    const bin = path.join(PROJECT_ROOT, 'bin', 'coinkeep');
    // The config goes on stdin (it may hold a database password): nothing of it in argv or the environment.
    const c = spawn(process.execPath, [bin, 'signer', 'run', '--config-stdin', '--socket', socketPath], { stdio: ['pipe', 'pipe', 'pipe'] });
    child = c;
    // The child's log lines go to the daemon's log (its own component and pid in them).
    for (const out of [c.stdout!, c.stderr!])
      createInterface({ input: out }).on('line', (line) => {
        const error = relay(log, line);
        if (error) lastChildError = error;
      });
    // One line of JSON (YAML reads it); stdin stays open: the child ends when this daemon is gone.
    c.stdin!.write(configLine(config) + '\n');
    c.stdin!.on('error', () => undefined);
    log.info('signer started', { pid: c.pid });
    c.once('close', (code, sig) => {
      if (child === c) child = null;
      exits++;
      client.close();
      if (stopped) return;
      const wait = BACKOFF_MS[Math.min(restarts, BACKOFF_MS.length - 1)]!;
      restarts++;
      log.warn('signer ended; payouts wait until it is back', { code, signal: sig, restart_in_ms: wait });
      restartTimer = setTimeout(spawnChild, wait);
      restartTimer.unref();
    });
  };

  let ping: NodeJS.Timeout | null = null;

  /** Starts the signer (child or in-process) and, the first time, waits for it: the fingerprint and the gas stations' keys come from it. */
  const start = async (): Promise<void> => {
    if (mode === 'child') spawnChild();
    else if (deps.inProcess) inProcess = await deps.inProcess(socketPath);

    await keys.load();
    // The first start needs the signer (the fingerprint and the gas stations' keys); later starts
    // have them stored and go on without it.
    const known = keys.knownFingerprint !== null;
    // A child just started is waited for a little even when the keys are known (its first answers moves nothing then).
    const deadline = Date.now() + (known ? (mode === 'child' ? KNOWN_WAIT_MS : 0) : START_WAIT_MS);
    for (;;) {
      try {
        await keys.checkSigner(2000);
        await keys.ensure(await deps.branchPaths());
        break;
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (known && (Date.now() > deadline || exits > 0 || deps.signal.aborted)) {
          log.warn('signer not reachable at start; payouts wait until it is', { error: lastChildError ?? why });
          break;
        }
        // A child that ended before it ever answered says why (no signer key, no seed): the start fails with it.
        if (mode === 'child' && exits > 0) throw new UserError(`the signer did not start: ${lastChildError ?? why}`);
        if (Date.now() > deadline || deps.signal.aborted) throw new Error(`the signer did not answer on ${socketPath}: ${why}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    ping = setInterval(() => {
      void (async () => {
        await keys.checkSigner(2000);
        await keys.ensure(await deps.branchPaths());
      })().catch((err: unknown) => {
        client.lastError = err instanceof Error ? err.message : String(err);
      });
    }, PING_MS);
    ping.unref();
  };

  const status = (): SignerStatus => ({
    mode,
    socket: socketPath,
    up: client.up && client.fingerprint !== null && client.fingerprint === keys.knownFingerprint,
    fingerprint: client.fingerprint,
    pid: mode === 'child' ? (child?.pid ?? null) : mode === 'in_process' ? process.pid : null,
    restarts,
    last_error: client.lastError,
  });

  const close = async (): Promise<void> => {
    stopped = true;
    if (ping) clearInterval(ping);
    if (restartTimer) clearTimeout(restartTimer);
    client.close();
    const c = child;
    if (c && c.exitCode === null) {
      const ended = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
      await ended;
      clearTimeout(timer);
    }
    await inProcess?.close();
  };

  const module: DaemonModule = { close };
  return {
    module,
    start,
    client,
    keys,
    status,
    /** The child's pid (child mode): tests end it to see payouts wait. */
    childPid: (): number | null => child?.pid ?? null,
  };
}

/** The daemon's config as one line of JSON, its bigints tagged (`{"$bigint": "…"}`): the child takes it as parsed (configFromLine). */
export function configLine(config: Config): string {
  return JSON.stringify(config, (_k, v: unknown) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v));
}

/**
 * A line the child wrote, logged again by the daemon at its level (a line that is not the logger's
 * JSON, or the CLI's error envelope: as an error). Returns the error's text when it is one.
 */
function relay(log: Logger, line: string): string | null {
  if (line.trim() === '') return null;
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  if (parsed && typeof parsed.msg === 'string') {
    const { level, msg, time: _time, ...fields } = parsed;
    const at = level === 'debug' || level === 'info' || level === 'warn' || level === 'error' ? level : 'info';
    log[at](msg as string, fields);
    return at === 'error' ? (msg as string) : null;
  }
  const envelope = parsed?.error as { message?: unknown } | undefined;
  const text = typeof envelope?.message === 'string' ? envelope.message : line.replace(/^coinkeep: /, '').slice(0, 2000);
  log.error('signer failed', { error: text });
  return text;
}
