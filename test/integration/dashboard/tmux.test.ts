import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { WebhookDeliveryEntity } from '../../../src/db/entities/webhooks';
import { COINKEEP_BIN, until } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile } from '../../helpers/daemon';
import { COINS } from '../../helpers/invoice-fixture';
import { WebhookSink } from '../../helpers/webhook-sink';
import { PAY_TO, startWithdrawalFixture } from '../../helpers/withdrawal-fixture';

/**
 * Issue 21 §3, end to end: `coinkeep dashboard` in a real terminal (tmux, 80×24, NO_COLOR), driven
 * with send-keys and read with capture-pane: it approves a withdrawal and replays a delivery, then
 * q gives the terminal back.
 */
const run = promisify(execFile);
const SOCKET = `coinkeep-dash-${process.pid}`;
const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-L', SOCKET, ...args])).stdout;
const screen = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', 'dash');
const sees = async (re: RegExp, what = re.source): Promise<string> => {
  let last = '';
  try {
    // A deadline, not a wait: the dashboard's cold start on a loaded machine takes seconds.
    await until(async () => re.test((last = await screen())), 60_000, what);
  } catch (err) {
    throw new Error(`${(err as Error).message}; the terminal shows:\n${last}`);
  }
  return last;
};

test('in tmux at 80×24 the dashboard approves a withdrawal with a masked code, replays a delivery, and q restores the terminal', async (t) => {
  const f = await startWithdrawalFixture();
  const sink = await WebhookSink.start();
  t.teardown(async () => {
    await tmux('kill-server').catch(() => undefined);
    await sink.close();
    await f.stop();
  });
  await f.fund('1');
  await f.setAccount({ dual_approval_threshold: '1000' });
  const admin = await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@tmux.test', 'admin');
  const otp = new RealOtp(admin.member.totp_secret);
  const w = await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO });
  t.is(w.body.status, 'awaiting_approval');
  const hooks = await f.key(['read', 'create_invoice']);
  const endpoint = (await hooks.post('/v1/webhooks/endpoints', { url: sink.url('/tmux'), event_types: ['withdrawal.awaiting_approval'] })).body;
  const ping = await f.td.daemon.webhooks.deliveries.ping(f.accountId, endpoint.id, 'ping');
  await sink.waitFor('/tmux', 1);
  const store = f.td.daemon.store;
  await until(async () => (await store.read.findOneByOrFail(WebhookDeliveryEntity, { id: ping.id })).status !== 'pending', 15_000, 'the ping delivered');
  await store.write((em) =>
    em.update(WebhookDeliveryEntity, { id: ping.id }, { status: 'exhausted', next_attempt_at: null, last_error: 'connect ECONNREFUSED' }),
  );

  // CI=0: ink draws nothing but the last frame when it believes it runs in CI (as `.ci/run` says).
  // The shell in the pane notes the dashboard's exit status in a file: tmux's own record of a dead
  // pane's status was seen missing on a loaded machine (dead, yet neither status nor signal).
  const exitFile = path.join(f.td.dataDir, 'dashboard-exit');
  const command = `env CI=0 NO_COLOR=1 TERM=xterm-256color '${process.execPath}' '${COINKEEP_BIN}' --config '${cliConfigFile(f.td)}' dashboard --as admin@tmux.test; echo "exit $?" > '${exitFile}'`;
  await tmux('new-session', '-d', '-x', '80', '-y', '24', '-s', 'dash', command);
  await tmux('set-option', '-t', 'dash', 'remain-on-exit', 'on');

  const overview = await sees(/payouts: awaiting_approval 1/);
  t.regex(overview, /Coinkeep {2}testnet · sqlite/);
  t.true(
    overview.split('\n').every((l) => [...l].length <= 80),
    'nothing wider than the terminal',
  );
  t.notRegex(await screen(true), /\x1b\[(?:3[0-7]|9[0-7]|38;)/, 'no colour under NO_COLOR');

  await tmux('send-keys', '-t', 'dash', '3');
  await sees(new RegExp(`withdrawal ${w.body.id}`));
  await tmux('send-keys', '-t', 'dash', 'y');
  await sees(/Two-factor code of admin@tmux\.test/);
  const code = await otp.next();
  await tmux('send-keys', '-t', 'dash', '-l', code);
  const masked = await sees(/••••••/);
  t.false(masked.includes(code), 'the code is never on screen');
  await tmux('send-keys', '-t', 'dash', 'Enter');
  await sees(new RegExp(`withdrawal ${w.body.id}: pending`));
  t.is((await f.api.get(`/v1/withdrawals/${w.body.id}`)).body.status, 'pending');

  await tmux('send-keys', '-t', 'dash', '4');
  await sees(new RegExp(`${ping.id.slice(-8)} exhausted`));
  await tmux('send-keys', '-t', 'dash', 'r');
  await sees(/queued to be sent again/);
  await sink.waitFor('/tmux', 2);

  await tmux('send-keys', '-t', 'dash', 'q');
  const exited = async () => (existsSync(exitFile) ? readFileSync(exitFile, 'utf8').trim() : null);
  await until(async () => Boolean(await exited()), 15_000, 'the dashboard exited').catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await screen()}`);
  });
  t.is(await exited(), 'exit 0');
  t.notRegex(await screen(), /Coinkeep/, 'the shell screen is back as it was');
});
