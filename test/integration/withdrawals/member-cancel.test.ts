/**
 * PRODUCT §14: any member may cancel a `pending`, `review` or `awaiting_approval` withdrawal with
 * `coinkeep withdrawals cancel ID --account A --as EMAIL --otp CODE`; refusals change nothing.
 */
import test, { type ExecutionContext } from 'ava';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { verifyLedger } from '../../../src/ledger/verify';
import { RealOtp } from '../../helpers/cli-otp';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile } from '../../helpers/daemon';
import { COINS } from '../../helpers/invoice-fixture';
import { PAY_TO, startWithdrawalFixture } from '../../helpers/withdrawal-fixture';
import { eventTypes, withdrawalPicture } from '../../helpers/withdrawal-picture';

const DEV = 'dev@shop.test';
const body = (over: Record<string, unknown> = {}) => ({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, ...over });

async function fixture(t: ExecutionContext) {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  const config = cliConfigFile(f.td);
  const cli = (args: string[]) => runBin(COINKEEP_BIN, ['--config', config, '--json', ...args], { timeoutMs: 60_000 });
  return Object.assign(f, { cli });
}

test('any member, a developer too, cancels a pending, review or awaiting_approval withdrawal through the CLI with a two-factor code: hold released, withdrawal.cancelled, security log', async (t) => {
  const f = await fixture(t);
  const pending = (await f.api.post('/v1/withdrawals', body({ payout_id: 'c-pending' }))).body;
  await f.setAccount({ dual_approval_threshold: '1000' }); // 0.1 BTC is 6800 USD at the test rates
  const awaiting = (await f.api.post('/v1/withdrawals', body({ payout_id: 'c-awaiting' }))).body;
  await f.setAccount({ dual_approval_threshold: null });
  const dev = new RealOtp((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, DEV, 'developer')).member.totp_secret);
  const review = (await f.api.post('/v1/withdrawals', body({ payout_id: 'c-review' }))).body;
  t.deepEqual([pending.status, awaiting.status, review.status], ['pending', 'awaiting_approval', 'review']);
  t.deepEqual(await f.balance(), { available: '0.699925', hold: '0.300075' });

  for (const w of [pending, awaiting, review]) {
    const r = await f.cli(['withdrawals', 'cancel', '--account', f.accountId, '--as', DEV, '--otp', await dev.next(), w.id]);
    t.is(r.code, 0, r.stderr);
    t.like(r.json, { id: w.id, status: 'cancelled' });
    t.is((await eventTypes(f, w.id)).at(-1), 'withdrawal.cancelled');
    t.is((await f.api.get(`/v1/withdrawals/${w.id}`)).body.status, 'cancelled');
  }
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
  t.true((await verifyLedger(f.td.daemon.store.read)).ok);
  const log = await f.td.daemon.store.read.find(SecurityLogEntity, {
    where: { account_id: f.accountId, action: 'withdrawal.cancelled' },
    order: { created_at: 'ASC' },
  });
  t.deepEqual(
    log.map((e) => [e.actor, JSON.parse(e.details).withdrawal_id, JSON.parse(e.details).from]),
    [
      [DEV, pending.id, 'pending'],
      [DEV, awaiting.id, 'awaiting_approval'],
      [DEV, review.id, 'review'],
    ],
  );
});

test('a member cancel is refused and changes nothing: not a member (forbidden), a wrong two-factor code (forbidden, field otp), a withdrawal already processing (conflict, status processing)', async (t) => {
  const f = await fixture(t);
  const w = (await f.api.post('/v1/withdrawals', body())).body;
  const cancel = async (as: string, otp: string) => {
    const r = await f.cli(['withdrawals', 'cancel', '--account', f.accountId, '--as', as, '--otp', otp, w.id]);
    const { code, details } = JSON.parse(r.stderr).error;
    return { exit: r.code, code, details };
  };

  const before = await withdrawalPicture(f, w.id, f.owner);
  t.deepEqual(await cancel('stranger@elsewhere.test', '123456'), { exit: 1, code: 'forbidden', details: {} });
  t.deepEqual(await withdrawalPicture(f, w.id, f.owner), before, 'a stranger changes nothing');
  t.deepEqual(await cancel(f.owner, '000000'), { exit: 1, code: 'forbidden', details: { field: 'otp' } });
  t.deepEqual(await withdrawalPicture(f, w.id, f.owner), before, 'a wrong code changes nothing');

  await f.td.daemon.store.write((em) => em.update(WithdrawalEntity, { id: w.id }, { status: 'processing' }));
  const processing = await withdrawalPicture(f, w.id, f.owner);
  t.deepEqual(await cancel(f.owner, f.ownerOtp.next()), { exit: 1, code: 'conflict', details: { status: 'processing' } });
  t.deepEqual(await withdrawalPicture(f, w.id, f.owner), processing, 'a withdrawal being paid is not cancelled');
});
