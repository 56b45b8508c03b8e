import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { PROJECT_ROOT } from '../../config/load';
import { ensureDataDir, loadMasterKey } from '../../db/seal';
import type { StatusResponse } from '../../admin/contract';
import type { Daemon } from '../../daemon/main';
import { logFilePath, pidFilePath } from '../../daemon/paths';
import { UserError } from '../../shared/errors';
import { adminCall, DAEMON_DOWN } from '../admin-client';
import { readMnemonic } from './wallet';
import { chainStatusLines, feeCeilingLines, gasStationLines, payoutAlertLines } from './chain-status';
import { cliConfig, configPath, output, wholeNumber } from '../context';
import { checkPresetNetwork, DEFAULT_PRESET_RPC_URL, initConfigText, initNetwork, presetChainBlock } from './init-config';

export { logFilePath };
const CLI_ENTRY = path.join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js');

type Opts = Record<string, string | boolean | undefined>;

/** Runs the daemon in this process until SIGTERM/SIGINT; the shutdown is bounded by 10 s. */
export async function runForeground(cmd: Command, extra?: (d: Daemon) => Promise<void>, config = cliConfig(cmd)): Promise<void> {
  // The daemon's modules (Koa, TypeORM...) load only for the commands that run it.
  const { startDaemon } = require('../../daemon/main') as typeof import('../../daemon/main');
  const daemon = await startDaemon(config, { pidFile: true });
  if (extra) await extra(daemon);
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      setTimeout(() => {
        daemon.logger.error('shutdown took longer than 10 s; exiting');
        process.exit(1);
      }, 10_000).unref();
      void daemon.stop().then(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
}

/** `coinkeep status`: the signer's line (PRODUCT §18). */
function signerLines(s: StatusResponse['signer']): string[] {
  if (!s) return [];
  const how = s.mode === 'child' ? `child${s.pid === null ? '' : ` pid ${s.pid}`}` : s.mode === 'socket' ? `run apart on ${s.socket}` : 'in process';
  const restarts = s.restarts > 0 ? `, restarted ${s.restarts} time(s)` : '';
  return s.up
    ? [`signer: up (${how}${restarts}), seed ${s.fingerprint}`]
    : [`signer: DOWN (${how}${restarts}): payouts wait until it is back${s.last_error ? ` (${s.last_error})` : ''}`];
}

export function lastLines(file: string, n: number): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8').split('\n').filter(Boolean).slice(-n).join('\n');
  } finally {
    closeSync(fd);
  }
}

async function daemonStatus(dataDir: string): Promise<StatusResponse | null> {
  try {
    return await adminCall<StatusResponse>(dataDir, 'GET', '/admin/status', undefined, 2000);
  } catch {
    return null;
  }
}

export function registerLifecycleCommands(program: Command): void {
  program
    .command('init')
    .description('write the config, create the data dir, master key and database')
    .option('--network <network>', "testnet or mainnet (default testnet, or the preset's)")
    .option('--preset <name>', 'a built-in EVM network (base, bsc, sepolia...): a new config gets its chain entry; a kept one is shown it')
    .option('--rpc-url <url>', `with --preset: the network's node (default ${DEFAULT_PRESET_RPC_URL})`)
    .option('--restore', 'store the wallet seed from backup words (stdin or prompt) instead of a new one')
    .option('--first-branch <n>', 'new accounts start at this wallet branch (a restore without the old database)')
    .action(async (o: Opts, cmd: Command) => {
      const wanted = initNetwork(o.network as string | undefined, o.preset as string | undefined, o.rpcUrl as string | undefined);
      const file = configPath(cmd);
      let wroteConfig = false;
      if (!existsSync(file)) {
        const example = readFileSync(path.join(PROJECT_ROOT, 'config', 'coinkeep.example.yaml'), 'utf8');
        const text = initConfigText(example, wanted.network, wanted.preset);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, text, { mode: 0o600 });
        wroteConfig = true;
      }
      const config = cliConfig(cmd);
      // A kept config is not edited: the preset's entry is shown, for the operator to add under `chains:`.
      if (wanted.preset) checkPresetNetwork(wanted.preset.name, wanted.preset.preset, config.network);
      const chainBlock = wanted.preset ? presetChainBlock(wanted.preset) : null;
      ensureDataDir(config.data_dir);
      mkdirSync(path.join(config.data_dir, 'logs'), { recursive: true, mode: 0o700 });
      loadMasterKey(config.data_dir, { create: true });
      const { Store } = require('../../db/store') as typeof import('../../db/store');
      const store = await Store.open({ url: config.database.url });
      const applied = await store.migrate();
      await store.close();
      // The wallet and the database are loaded only by the commands that need them: every CLI call starts a process.
      const { prepareSeed } = require('../../wallet/signer-process/main') as typeof import('../../wallet/signer-process/main');
      const seed = await prepareSeed(config, o.restore ? await readMnemonic() : undefined, { firstBranch: firstBranch(o.firstBranch) });
      output(
        cmd,
        {
          config: file,
          config_written: wroteConfig,
          data_dir: config.data_dir,
          network: config.network,
          migrations_applied: applied,
          wallet_seed: seed.status,
          wallet_fingerprint: seed.fingerprint,
          wallet_next_branch: seed.next_branch,
          ...(wanted.preset ? { preset: wanted.preset.name, chain_written: wroteConfig, chain_block: chainBlock } : {}),
        },
        (r) =>
          [
            `config: ${r.config}${r.config_written ? ' (written)' : ' (kept)'}`,
            `data dir: ${r.data_dir}`,
            `network: ${r.network}`,
            `migrations applied: ${r.migrations_applied.length}`,
            `wallet seed: ${r.wallet_seed} (fingerprint ${r.wallet_fingerprint}; back it up: coinkeep wallet backup)`,
            ...(r.chain_block === undefined
              ? []
              : r.chain_written
                ? [`chain: ${r.preset} (in the config; set its rpc_url to your node)`]
                : [`chain: ${r.preset} is not in the kept config; add this entry under chains: in ${r.config}:`, r.chain_block!.trimEnd()]),
          ].join('\n'),
      );
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async (_o: Opts, cmd: Command) => {
      const config = cliConfig(cmd);
      const { Store } = require('../../db/store') as typeof import('../../db/store');
      const store = await Store.open({ url: config.database.url });
      const applied = await store.migrate();
      await store.close();
      output(cmd, { migrations_applied: applied }, (r) => `migrations applied: ${r.migrations_applied.join(', ') || 'none'}`);
    });

  program
    .command('run')
    .description('run the daemon in the foreground (what bin/coinkeepd runs)')
    .action(async (_o: Opts, cmd: Command) => runForeground(cmd));

  program
    .command('start')
    .description('start the daemon in the background; returns once the API answers')
    .option('--timeout <seconds>', 'how long to wait for the API', '30')
    .action(async (o: Opts, cmd: Command) => {
      const config = cliConfig(cmd);
      if (await daemonStatus(config.data_dir)) throw new UserError('coinkeepd is already running');
      ensureDataDir(config.data_dir);
      const logFile = logFilePath(config.data_dir);
      mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
      const fd = openSync(logFile, 'a', 0o600);
      const child = spawn(process.execPath, [CLI_ENTRY, 'run', '--config', path.resolve(configPath(cmd))], {
        detached: true,
        stdio: ['ignore', fd, fd],
        env: process.env,
      });
      closeSync(fd);
      let exited: number | null = null;
      child.on('exit', (code) => (exited = code ?? 1));
      child.unref();
      const deadline = Date.now() + wholeNumber('--timeout', o.timeout) * 1000;
      while (Date.now() < deadline) {
        if (exited !== null) break;
        const status = await daemonStatus(config.data_dir);
        if (status && (await healthy(String(status.api_url)))) {
          output(cmd, { status: 'running', pid: child.pid, api_url: status.api_url, log: logFile }, (r) => `coinkeepd started (pid ${r.pid}) at ${r.api_url}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      if (exited === null) child.kill('SIGTERM');
      const tail = lastLines(logFile, 10);
      throw new UserError(`coinkeepd did not start${exited !== null ? ` (exit code ${exited})` : ''}; last log lines:\n${tail}`);
    });

  program
    .command('stop')
    .description('stop the daemon (SIGTERM; in-flight requests finish)')
    .action(async (_o: Opts, cmd: Command) => {
      const config = cliConfig(cmd);
      const pid = await daemonPid(config.data_dir);
      if (pid === null) {
        output(cmd, { status: 'stopped', was_running: false }, () => 'coinkeepd is not running');
        return;
      }
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 12_000;
      while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      if (alive(pid)) throw new UserError(`coinkeepd (pid ${pid}) did not stop within 12 s`);
      output(cmd, { status: 'stopped', was_running: true, pid }, () => `coinkeepd stopped (pid ${pid})`);
    });

  program
    .command('status')
    .description('is the daemon running, and what it serves')
    .action(async (_o: Opts, cmd: Command) => {
      const config = cliConfig(cmd);
      const status = await daemonStatus(config.data_dir);
      if (!status) throw new UserError(DAEMON_DOWN, 3);
      output(cmd, status, (s) =>
        [
          `coinkeepd running (pid ${s.pid}) since ${s.started_at}`,
          `api: ${s.api_url}`,
          `network: ${s.network}`,
          `database: ${s.database}`,
          ...chainStatusLines(s.chains ?? []),
          ...gasStationLines(s.gas_stations ?? []),
          ...payoutAlertLines(s.payout_alerts ?? []),
          ...feeCeilingLines(s.fee_ceilings ?? []),
          ...signerLines(s.signer),
        ].join('\n'),
      );
    });

  program
    .command('logs')
    .description("print the daemon's log")
    .option('-f, --follow', 'keep printing new lines')
    .option('-n, --lines <n>', 'lines to print', '100')
    .action(async (o: Opts, cmd: Command) => {
      const file = logFilePath(cliConfig(cmd).data_dir);
      if (!existsSync(file)) throw new UserError(`no log yet at ${file}`);
      const n = Number(o.lines);
      if (!Number.isInteger(n) || n < 0) throw new UserError('--lines must be a whole number');
      const text = n === 0 ? '' : lastLines(file, n);
      if (text) process.stdout.write(text + '\n');
      if (!o.follow) return;
      let pos = statSync(file).size;
      await new Promise<void>(() => {
        watch(file, () => {
          const size = statSync(file).size;
          if (size < pos) pos = 0;
          if (size === pos) return;
          const fd = openSync(file, 'r');
          const buf = Buffer.alloc(size - pos);
          readSync(fd, buf, 0, buf.length, pos);
          closeSync(fd);
          pos = size;
          process.stdout.write(buf);
        });
      });
    });
}

/**
 * The pid of the daemon serving this data dir, as the daemon itself tells over the admin socket. A
 * pid file alone is not trusted: after a crash its number may belong to another program by now. A
 * stale pid file is removed; a live process named by one that does not answer is left to the user.
 */
async function daemonPid(dataDir: string): Promise<number | null> {
  const status = await daemonStatus(dataDir);
  if (status && Number.isInteger(status.pid)) return status.pid as number;
  const file = pidFilePath(dataDir);
  const recorded = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  if (Number.isInteger(recorded) && recorded > 0 && alive(recorded)) {
    throw new UserError(
      `process ${recorded} is named in ${file} but no coinkeepd answers on the admin socket; if it is a stuck coinkeepd, end it with: kill ${recorded}`,
    );
  }
  rmSync(file, { force: true });
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function healthy(apiUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

function firstBranch(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(String(v)) || n > 0x7fffffff) throw new UserError('--first-branch must be an integer from 0 to 2147483647');
  return n;
}
