/**
 * The daemon's life through the real binaries: init, start, status, logs, stop, run, and the
 * failures (bad config, port in use, daemon down). One data dir for the file; tests run in order.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CliEnv, COINKEEP_BIN, until, type CliResult } from '../../helpers/cli';

const env = new CliEnv({ log_level: 'info' });
const pidFile = path.join(env.dataDir, 'coinkeepd.pid');
const socket = path.join(env.dataDir, 'admin.sock');
const logFile = path.join(env.dataDir, 'logs', 'coinkeepd.log');
const mode = (p: string) => statSync(p).mode & 0o777;

test.after.always(() => env.cleanup());

/** A failure as the CLI must report it: non-zero, nothing on stdout, exactly one line on stderr. */
function oneLineFailure(t: { is: Function; regex: Function; not: Function }, r: CliResult, re: RegExp): void {
  t.not(r.code, 0, r.stderr);
  t.is(r.stdout, '');
  t.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
  t.regex(r.stderr, re);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test.serial('a bad config stops every command with one line naming the key and the reason', async (t) => {
  const bad = path.join(env.dir, 'bad.yaml');
  const cases: Array<[string, string[], RegExp]> = [
    ['network: moonnet\n', ['start'], /network: must be one of mainnet, testnet/],
    ['listen: { host: 127.0.0.1, port: 70000 }\n', ['run'], /listen\.port: must be an integer from 0 to 65535/],
    ['colour: blue\n', ['init'], /colour: unknown key/],
    [
      'rates: { sources: [ { kind: fixed, rates: { BTC: { USD: "-1" } } } ] }\n',
      ['status'],
      /rates\.sources\[0\]\.rates\.BTC\.USD: must be a positive decimal/,
    ],
    ['chains: [ { id: eth, kind: evm, rpc_url: "http://127.0.0.1:8545" } ]\n', ['--json', 'account', 'list'], /chains\[0\]\.chain_id: is required/],
    ['fiat: { enabled: [USD], default: EUR }\n', ['dev'], /fiat\.default: must be one of fiat\.enabled/],
    ['network: [unclosed\n', ['start'], /invalid YAML at line 2, column 1: /],
  ];
  for (const [text, args, re] of cases) {
    writeFileSync(bad, text);
    const r = await env.run(['--config', bad, ...args], { noConfig: true });
    oneLineFailure(t, r, re);
  }
  const missing = await env.run(['--config', path.join(env.dir, 'nope.yaml'), 'start'], { noConfig: true });
  oneLineFailure(t, missing, /nope\.yaml not found/);
  t.false(existsSync(env.dataDir), 'nothing was created');
});

test.serial('while the daemon is down, a CLI call says so in one line and exits non-zero', async (t) => {
  for (const args of [['status'], ['account', 'list'], ['--json', 'keys', 'list', '--account', 'x'], ['security-log', '--account', 'x']]) {
    const r = await env.run(args);
    oneLineFailure(t, r, /coinkeepd is not running/);
  }
});

test.serial('init creates the data dir (0700), the master key (0600), the database, and is safe to repeat', async (t) => {
  const r = await env.run(['--json', 'init']);
  t.is(r.code, 0, r.stderr);
  t.is(r.json.config, env.configFile);
  t.false(r.json.config_written, 'an existing config is kept');
  t.is(r.json.data_dir, env.dataDir);
  t.true(r.json.migrations_applied.length > 0);
  t.is(mode(env.dataDir), 0o700);
  t.is(mode(path.join(env.dataDir, 'logs')), 0o700);
  const key = path.join(env.dataDir, 'master.key');
  t.is(mode(key), 0o600);
  t.is(Buffer.from(readFileSync(key, 'utf8').trim(), 'base64url').length, 32);
  t.is(mode(path.join(env.dataDir, 'coinkeep.db')), 0o600);

  const keyBefore = readFileSync(key, 'utf8');
  const again = await env.run(['--json', 'init']);
  t.is(again.code, 0, again.stderr);
  t.deepEqual(again.json.migrations_applied, []);
  t.is(readFileSync(key, 'utf8'), keyBefore, 'the master key is never replaced');

  const human = await env.run(['init']);
  t.is(human.code, 0);
  t.regex(human.stdout, /migrations applied: 0/);
});

let daemonPid = 0;
let apiUrl = '';

test.serial('start detaches, writes the pid file and logs under data/logs, and returns only when /healthz answers', async (t) => {
  const r = await env.run(['--json', 'start']);
  t.is(r.code, 0, r.stderr);
  t.is(r.json.status, 'running');
  apiUrl = r.json.api_url;
  daemonPid = r.json.pid;
  t.regex(apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  // No polling: the answer must already be there when start returns.
  const health = await fetch(`${apiUrl}/healthz`);
  t.is(health.status, 200);
  t.is(Number(readFileSync(pidFile, 'utf8').trim()), daemonPid);
  t.is(mode(pidFile), 0o600);
  t.is(mode(socket), 0o600);
  t.is(r.json.log, logFile);
  t.is(mode(logFile), 0o600);
  t.true(r.ms < 15000);

  const twice = await env.run(['start']);
  oneLineFailure(t, twice, /already running/);
  t.true(alive(daemonPid), 'the running daemon is untouched');
});

test.serial('a second daemon on the same data dir refuses to take the admin socket', async (t) => {
  const r = await env.run(['run']);
  t.not(r.code, 0);
  t.regex(r.stderr, /another coinkeepd is running/);
  const status = await env.run(['--json', 'status']);
  t.is(status.code, 0, status.stderr);
  t.is(status.json.pid, daemonPid);
  t.is(Number(readFileSync(pidFile, 'utf8').trim()), daemonPid);
});

test.serial('status tells what runs, in JSON and for people', async (t) => {
  const r = await env.run(['--json', 'status']);
  t.is(r.code, 0, r.stderr);
  t.like(r.json, { status: 'running', pid: daemonPid, network: 'testnet', api_url: apiUrl, database: 'sqlite', data_dir: env.dataDir });
  t.true(Number.isInteger(r.json.uptime_seconds));
  const human = await env.run(['status']);
  t.is(human.code, 0);
  t.regex(human.stdout, new RegExp(`coinkeepd running \\(pid ${daemonPid}\\)`));
  t.true(human.stdout.includes(apiUrl));
});

test.serial('logs prints the log; -n limits it', async (t) => {
  const r = await env.run(['logs']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /"msg":"coinkeepd started"/);
  for (const line of r.stdout.trim().split('\n')) t.notThrows(() => JSON.parse(line), 'every log line is JSON');
  const one = await env.run(['logs', '-n', '1']);
  t.is(one.stdout.trim().split('\n').length, 1);
});

test.serial('stop sends SIGTERM, the daemon exits within 10 s, the pid file goes; logs -f follows it', async (t) => {
  const follow = env.spawn(COINKEEP_BIN, ['logs', '-f', '-n', '0']);
  // Following from now on: a line appended once its watch is open comes out (appended until it does).
  const marker = JSON.stringify({ level: 'info', msg: 'the follower is watching' });
  await until(() => (appendFileSync(logFile, `${marker}\n`), follow.stdout.includes(marker)), 10000, 'logs -f to follow');
  const r = await env.run(['--json', 'stop']);
  t.is(r.code, 0, r.stderr);
  t.like(r.json, { status: 'stopped', was_running: true, pid: daemonPid });
  t.true(r.ms < 10000, `stop took ${r.ms} ms`);
  t.false(alive(daemonPid));
  t.false(existsSync(pidFile));
  await follow.waitFor(/"msg":"coinkeepd stopped"/, 5000);
  t.false(/coinkeepd started/.test(follow.stdout), '-n 0 prints only what comes after');
  await follow.stop('SIGTERM');

  const status = await env.run(['status']);
  t.not(status.code, 0);
  t.regex(status.stderr, /not running/);
  const again = await env.run(['--json', 'stop']);
  t.is(again.code, 0);
  t.like(again.json, { status: 'stopped', was_running: false });
});

test.serial("start fails with a non-zero exit and the log's last lines when the port is taken", async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    env.writeConfig({ log_level: 'info', listen: { host: '127.0.0.1', port } });
    const r = await env.run(['start']);
    t.not(r.code, 0);
    t.is(r.stdout, '');
    t.regex(r.stderr, /coinkeepd did not start/);
    t.regex(r.stderr, /last log lines/);
    t.regex(r.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(listen\\): address already in use`));
    t.true(r.ms < 15000);
    t.false(existsSync(pidFile));
    const status = await env.run(['status']);
    t.regex(status.stderr, /not running/);
  } finally {
    blocker.close();
    env.writeConfig({ log_level: 'info' });
  }
});

test.serial('run (bin/coinkeepd) serves in the foreground and stops on SIGTERM; mainnet refuses test keys', async (t) => {
  env.writeConfig({ log_level: 'info', network: 'mainnet' });
  const { child: d, url } = await env.spawnDaemon();
  t.is((await fetch(`${url}/healthz`)).status, 200);
  await until(() => existsSync(pidFile), 5000, 'pid file');
  const status = await env.run(['--json', 'status']);
  t.is(status.json.pid, d.child.pid);
  t.is(status.json.network, 'mainnet');

  // On a mainnet environment the CLI refuses a test key (validation_error on mode), live keys work.
  const acc = (await env.run(['--json', 'account', 'create', '--name', 'Live', '--owner', 'owner@live.test'])).json.account.id;
  const [testKey, liveKey] = await Promise.all([
    env.run(['--json', 'keys', 'create', '--account', acc, '--as', 'owner@live.test', '--name', 'x', '--permissions', 'read', '--test']),
    env.run(['--json', 'keys', 'create', '--account', acc, '--as', 'owner@live.test', '--name', 'y', '--permissions', 'read']),
  ]);
  t.not(testKey.code, 0);
  t.is(testKey.stdout, '');
  t.deepEqual(JSON.parse(testKey.stderr), {
    error: { code: 'validation_error', message: 'test keys cannot be created on a mainnet environment', details: { field: 'mode' } },
  });
  t.is(testKey.stderr.split('\n').length, 2, 'one line');
  t.regex(liveKey.json.key.key_id, /^ck_live_/);
  t.is(liveKey.json.key.network, 'mainnet');

  const r = await d.stop('SIGTERM');
  t.is(r.code, 0);
  t.true(r.ms < 10000, `stopped in ${r.ms} ms`);
  t.regex(d.stdout, /"msg":"coinkeepd stopped"/);
  t.false(existsSync(pidFile));
  t.false(existsSync(socket) && (await connects(socket)));
  await t.throwsAsync(fetch(`${url}/healthz`));
});

test.serial('stop never signals a process it cannot confirm is the daemon; a stale pid file is cleared', async (t) => {
  const other = new CliEnv();
  t.teardown(() => other.cleanup());
  const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => void sleeper.kill('SIGKILL'));
  const stalePid = path.join(other.dataDir, 'coinkeepd.pid');
  mkdirSync(other.dataDir, { recursive: true });
  // After a crash the pid file names a number another program may hold now.
  writeFileSync(stalePid, `${sleeper.pid}\n`);
  const refused = await other.run(['stop']);
  oneLineFailure(t, refused, new RegExp(`process ${sleeper.pid} is named in .* but no coinkeepd answers`));
  t.true(alive(sleeper.pid!), 'the other program was not signalled');

  sleeper.kill('SIGKILL');
  await until(() => !alive(sleeper.pid!), 5000, 'the sleeper to end');
  const cleared = await other.run(['--json', 'stop']);
  t.is(cleared.code, 0, cleared.stderr);
  t.like(cleared.json, { status: 'stopped', was_running: false });
  t.false(existsSync(stalePid));
});

function connects(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socketPath);
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}
