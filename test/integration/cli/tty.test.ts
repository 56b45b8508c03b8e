import test from 'ava';
import { spawn } from 'node:child_process';
import { COINKEEP_BIN, runBin, until } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile, startTestDaemon, type TestDaemon } from '../../helpers/daemon';

/**
 * PRODUCT §4 and issue 2 §4 on a terminal: a new member's TOTP enrolment draws a QR code, and a
 * command that needs a two-factor code prompts for it when --otp is absent. The terminal is a real
 * pseudo-terminal made by util-linux `script`.
 */

let d: TestDaemon;
let configFile: string;

test.before(async () => {
  d = await startTestDaemon();
  configFile = cliConfigFile(d);
});
test.after.always(async () => {
  await d?.stop();
});

/** Half-block characters qrcode-terminal draws with. */
const QR = /[▀▄█]{10}/;

/** `coinkeep --config FILE ...args` on a pseudo-terminal; `answer` is typed once `prompt` shows. */
function onTerminal(args: string[], dialog?: { prompt: RegExp; answer: () => Promise<string> }): Promise<{ code: number | null; output: string }> {
  const command = ['exec', process.execPath, COINKEEP_BIN, '--config', configFile, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (output += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (output += s));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
  return (async () => {
    if (dialog) {
      await until(() => dialog.prompt.test(output), 15000, `the prompt ${dialog.prompt}`);
      child.stdin.write(`${await dialog.answer()}\n`);
    }
    const code = await exited;
    clearTimeout(timer);
    child.stdin.end();
    return { code, output };
  })();
}

test('account create draws the owner’s TOTP QR code on a terminal, and not when piped', async (t) => {
  const tty = await onTerminal(['account', 'create', '--name', 'Shop', '--owner', 'owner@tty.test']);
  t.is(tty.code, 0, tty.output);
  t.regex(tty.output, /TOTP secret: [A-Z2-7]{32}/);
  t.regex(tty.output, /Scan with an authenticator app/);
  t.regex(tty.output, QR);

  const piped = await runBin(COINKEEP_BIN, ['--config', configFile, 'account', 'create', '--name', 'Shop 2', '--owner', 'owner@pipe.test']);
  t.is(piped.code, 0, piped.stderr);
  t.regex(piped.stdout, /TOTP secret: [A-Z2-7]{32}/);
  t.notRegex(piped.stdout, QR);
});

test('member add prompts for the two-factor code on a terminal when --otp is absent', async (t) => {
  const created = await runBin(COINKEEP_BIN, ['--config', configFile, '--json', 'account', 'create', '--name', 'Team', '--owner', 'boss@tty.test']);
  t.is(created.code, 0, created.stderr);
  const account = created.json.account.id as string;
  const otp = new RealOtp(created.json.member.totp_secret as string);

  const added = await onTerminal(['member', 'add', '--account', account, '--as', 'boss@tty.test', '--email', 'dev@tty.test', '--role', 'developer'], {
    prompt: /Two-factor code: /,
    answer: () => otp.next(),
  });
  t.is(added.code, 0, added.output);
  t.regex(added.output, /member dev@tty\.test/);
  t.regex(added.output, /role: developer/);
  t.regex(added.output, QR);

  // A wrong code typed at the prompt is refused in one line, and nobody is added.
  const refused = await onTerminal(['member', 'add', '--account', account, '--as', 'boss@tty.test', '--email', 'dev2@tty.test', '--role', 'developer'], {
    prompt: /Two-factor code: /,
    answer: async () => '000000',
  });
  t.not(refused.code, 0);
  t.regex(refused.output, /coinkeep: .+/);
  const members = await runBin(COINKEEP_BIN, ['--config', configFile, '--json', 'account', 'show', '--account', account]);
  t.deepEqual(members.json.members.map((m: { email: string }) => m.email).sort(), ['boss@tty.test', 'dev@tty.test']);
});
