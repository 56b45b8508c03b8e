import test from 'ava';
import { spawn } from 'node:child_process';
import { ApiKeyEntity } from '../../../src/db/entities/auth';
import { COINKEEP_BIN, runBin, until } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile } from '../../helpers/daemon';
import { COINS } from '../../helpers/invoice-fixture';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

/**
 * Issue 21 §2: on a terminal, commands that need an id and get none offer a pick list (ink), and a
 * destructive one asks first unless --yes; with --json or without a terminal they never prompt and
 * fail with one line naming the missing argument. The terminal is a pseudo-terminal made by `script`.
 */

let f: WithdrawalFixture;
let config: string;
let adminOtp: RealOtp;
const ADMIN = 'admin@pick.test';

test.before(async () => {
  f = await startWithdrawalFixture();
  await f.fund('1');
  await f.setAccount({ dual_approval_threshold: '1000' });
  adminOtp = new RealOtp((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, ADMIN, 'admin')).member.totp_secret);
  config = cliConfigFile(f.td);
});
test.after.always(async () => {
  await f?.stop();
});

const withdraw = async (): Promise<string> => (await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO })).body.id;
const keyStatus = async (keyId: string) => (await f.td.daemon.store.read.findOneByOrFail(ApiKeyEntity, { key_id: keyId })).status;

/** `coinkeep --config FILE ...args` on a pseudo-terminal; each step waits for its text on screen, then types. */
async function onTerminal(args: string[], steps: Array<{ see: RegExp; type: string }>): Promise<{ code: number | null; output: string }> {
  const command = ['exec', process.execPath, COINKEEP_BIN, '--config', config, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  // CI=0: ink draws nothing but the last frame when it believes it runs in CI (as `.ci/run` says).
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', TERM: 'xterm', CI: '0' },
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // Deadlines, not waits: a cold CLI start on a loaded machine (the suite runs two files at once) takes seconds.
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  let seen = 0;
  for (const step of steps) {
    await until(() => step.see.test(output.slice(seen)), 60_000, step.see.source).catch((err: Error) => {
      child.kill('SIGKILL');
      throw new Error(`${err.message}; the terminal shows:\n${output}`);
    });
    seen = output.length;
    child.stdin.write(step.type);
  }
  const code = await exited;
  clearTimeout(timer);
  child.stdin.end();
  return { code, output };
}

test.serial('without a terminal or with --json, a command missing its id fails in one line naming it and changes nothing', async (t) => {
  const id = await withdraw();
  const keyId = (await f.td.daemon.keys.list(f.accountId))[0]!.key_id;
  const cases: Array<[string[], string]> = [
    [['withdrawals', 'approve', '--account', f.accountId, '--as', ADMIN, '--otp', '123456'], '<withdrawal-id>'],
    [['withdrawals', 'reject', '--account', f.accountId, '--as', ADMIN, '--otp', '123456'], '<withdrawal-id>'],
    [['withdraw-requests', 'approve', '--account', f.accountId, '--as', ADMIN, '--otp', '123456'], '<key_or_request_id>'],
    [['withdraw-requests', 'reject', '--account', f.accountId, '--as', ADMIN, '--otp', '123456'], '<key_or_request_id>'],
    [['webhooks', 'replay', '--account', f.accountId], '<delivery_id>'],
    [['keys', 'rotate', '--account', f.accountId, '--as', f.owner], '<key_id>'],
    [['keys', 'disable', '--account', f.accountId, '--as', f.owner], '<key_id>'],
    [['keys', 'revoke', '--account', f.accountId, '--as', f.owner], '<key_id>'],
  ];
  for (const [args, missing] of cases) {
    const plain = await runBin(COINKEEP_BIN, ['--config', config, ...args]);
    t.not(plain.code, 0, args.join(' '));
    t.is(plain.stdout, '');
    t.is(plain.stderr.trimEnd().split('\n').length, 1, plain.stderr);
    t.true(plain.stderr.startsWith(`coinkeep: missing required argument ${missing}`), plain.stderr);

    const json = await runBin(COINKEEP_BIN, ['--config', config, '--json', ...args]);
    t.not(json.code, 0);
    const envelope = JSON.parse(json.stderr).error;
    t.is(envelope.code, 'cli_error');
    t.true(envelope.message.startsWith(`missing required argument ${missing}`), envelope.message);
  }
  t.is((await f.api.get(`/v1/withdrawals/${id}`)).body.status, 'awaiting_approval');
  t.is(await keyStatus(keyId), 'active');

  // The dashboard itself needs a terminal: without one it says so in one line.
  const dash = await runBin(COINKEEP_BIN, ['--config', config, 'dashboard']);
  t.is(dash.code, 1);
  t.is(dash.stderr, 'coinkeep: dashboard needs a terminal (for scripts: coinkeep status --json)\n');
  await f.td.daemon.withdrawals.service.decide(f.accountId, id, { kind: 'member', email: ADMIN, otp: await adminOtp.next() }, 'reject');
});

test.serial('on a terminal, withdrawals approve without an id offers the waiting withdrawals and approves the one picked', async (t) => {
  const first = await withdraw();
  const second = await withdraw();
  const r = await onTerminal(
    ['withdrawals', 'approve', '--account', f.accountId, '--as', ADMIN, '--otp', await adminOtp.next()],
    [
      // Newest first: the older one is second on the list.
      { see: new RegExp(`Which withdrawal to approve\\?[\\s\\S]*${second}[\\s\\S]*${first}`), type: '\x1b[B' },
      { see: /2\/2/, type: '\r' },
    ],
  );
  t.is(r.code, 0, r.output);
  t.regex(r.output, new RegExp(`${first} +pending`));
  t.is((await f.api.get(`/v1/withdrawals/${first}`)).body.status, 'pending');
  t.is((await f.api.get(`/v1/withdrawals/${second}`)).body.status, 'awaiting_approval');
  await f.td.daemon.withdrawals.service.decide(f.accountId, second, { kind: 'member', email: ADMIN, otp: await adminOtp.next() }, 'reject');
});

test.serial('on a terminal, keys revoke picks the key and asks first: n changes nothing, --yes does not ask', async (t) => {
  const keys = await f.td.daemon.keys.list(f.accountId);
  const keyId = keys[0]!.key_id;
  const no = await onTerminal(
    ['keys', 'revoke', '--account', f.accountId, '--as', f.owner],
    [
      { see: /Which key to revoke\?/, type: '\r' },
      { see: new RegExp(`revoke key ${keyId} \\(revoke it for good\\)\\? \\[y/N\\]`), type: 'n' },
    ],
  );
  t.not(no.code, 0);
  t.regex(no.output, /coinkeep: cancelled; nothing changed/);
  t.is(await keyStatus(keyId), 'active');

  const yes = await onTerminal(['keys', 'revoke', '--account', f.accountId, '--as', f.owner, '--yes', keyId], []);
  t.is(yes.code, 0, yes.output);
  t.notRegex(yes.output, /\[y\/N\]/);
  t.is(await keyStatus(keyId), 'revoked');
});
