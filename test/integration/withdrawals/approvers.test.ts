/**
 * PRODUCT §14 (issue 29 §5): a dual approval or a review approval counts only from a second person:
 * not the holder of the requesting key's secret, not the member whose change caused a `pattern`
 * review, and not an owner or admin another member added or promoted less than 24 hours ago.
 * Members the operator adds hold their rights at once. Refusals are 403 `forbidden` with
 * `details.reason` naming the rule, and change nothing.
 */
import test, { type ExecutionContext } from 'ava';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { FakeClock } from '../../../src/shared/clock';
import { adminRequest } from '../../helpers/admin-socket';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile, OtpSource } from '../../helpers/daemon';
import { COINS } from '../../helpers/invoice-fixture';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';
import { withdrawalPicture } from '../../helpers/withdrawal-picture';

const DAY_MS = 24 * 3600 * 1000;
const body = (over: Record<string, unknown> = {}) => ({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, ...over });

async function fixture(t: ExecutionContext) {
  const clock = new FakeClock('2026-03-01T10:00:00.000Z');
  const f = await startWithdrawalFixture({ clock });
  t.teardown(() => f.stop());
  await f.fund('1');
  const config = cliConfigFile(f.td);
  const cli = (args: string[]) => runBin(COINKEEP_BIN, ['--config', config, '--json', ...args], { timeoutMs: 60_000 });
  /** `email` approves withdrawal `id` over the admin socket, as the CLI would. */
  const approve = (id: string, email: string, otp: OtpSource) =>
    adminRequest(f.td.dataDir, 'POST', `/admin/accounts/${f.accountId}/withdrawals/${id}/approve`, { as: email, otp: otp.next() });
  const withdraw = async (over: Record<string, unknown> = {}) => {
    const res = await f.api.post('/v1/withdrawals', body(over));
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  return Object.assign(f, { clock, cli, approve, withdraw });
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** An approval refused by one of PRODUCT §14's rules: 403 forbidden naming it, and nothing changed. */
async function refusedApproval(t: ExecutionContext, f: Fixture, id: string, email: string, otp: OtpSource, reason: string) {
  const before = await withdrawalPicture(f, id, email);
  const res = await f.approve(id, email, otp);
  t.is(res.status, 403, JSON.stringify(res.body));
  t.is(res.body.error.code, 'forbidden');
  t.deepEqual(res.body.error.details, { reason });
  t.deepEqual(await withdrawalPicture(f, id, email), before, `${reason}: nothing changed`);
}

const approvedBy = async (f: WithdrawalFixture, id: string): Promise<string[]> =>
  (await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'withdrawal.approved' }))
    .filter((e) => JSON.parse(e.details).withdrawal_id === id)
    .map((e) => e.actor);

test('the issue attack: an owner adds an admin through the CLI and approves as them at once: refused (approver_role_too_new); 24 hours later that admin approval counts', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '1000' }); // 0.1 BTC is 6800 USD at the test rates
  const w = await f.withdraw();
  t.is(w.status, 'awaiting_approval');

  const added = await f.cli([
    'member',
    'add',
    '--account',
    f.accountId,
    '--as',
    f.owner,
    '--otp',
    f.ownerOtp.next(),
    '--email',
    'new-admin@shop.test',
    '--role',
    'admin',
  ]);
  t.is(added.code, 0, added.stderr);
  const newAdmin = new OtpSource(added.json.member.totp_secret, f.clock);
  const cliApproval = await f.cli(['withdrawals', 'approve', '--account', f.accountId, '--as', 'new-admin@shop.test', '--otp', newAdmin.next(), w.id]);
  t.is(cliApproval.code, 1);
  t.like(JSON.parse(cliApproval.stderr).error, { code: 'forbidden', details: { reason: 'approver_role_too_new' } });
  await refusedApproval(t, f, w.id, 'new-admin@shop.test', newAdmin, 'approver_role_too_new');
  t.deepEqual(await approvedBy(f, w.id), []);

  f.clock.advance(DAY_MS);
  const res = await f.approve(w.id, 'new-admin@shop.test', newAdmin);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.status, 'pending');
  t.deepEqual(await approvedBy(f, w.id), ['new-admin@shop.test']);
});

test('a developer an owner promotes to admin approves only 24 hours after the promotion; an owner the operator added, demoted to admin by another owner, approves at once', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '1000' });
  const dev = new OtpSource((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'dev@shop.test', 'developer')).member.totp_secret, f.clock);
  const second = new OtpSource((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'second@shop.test', 'owner')).member.totp_secret, f.clock);
  const promoted = await f.cli([
    'member',
    'set-role',
    '--account',
    f.accountId,
    '--as',
    f.owner,
    '--otp',
    f.ownerOtp.next(),
    '--email',
    'dev@shop.test',
    '--role',
    'admin',
  ]);
  t.is(promoted.code, 0, promoted.stderr);
  const demoted = await f.cli([
    'member',
    'set-role',
    '--account',
    f.accountId,
    '--as',
    f.owner,
    '--otp',
    f.ownerOtp.next(),
    '--email',
    'second@shop.test',
    '--role',
    'admin',
  ]);
  t.is(demoted.code, 0, demoted.stderr);
  const a = await f.withdraw({ payout_id: 'a' });
  const b = await f.withdraw({ payout_id: 'b' });

  await refusedApproval(t, f, a.id, 'dev@shop.test', dev, 'approver_role_too_new');
  const bySecond = await f.approve(b.id, 'second@shop.test', second);
  t.is(bySecond.status, 200, JSON.stringify(bySecond.body));
  t.is(bySecond.body.status, 'pending');

  f.clock.advance(DAY_MS - 120_000);
  await refusedApproval(t, f, a.id, 'dev@shop.test', dev, 'approver_role_too_new');
  f.clock.advance(120_000);
  const byDev = await f.approve(a.id, 'dev@shop.test', dev);
  t.is(byDev.status, 200, JSON.stringify(byDev.body));
  t.is(byDev.body.status, 'pending');
});

test('coinkeep member add without --as: the operator adds the member, the security log says so, and their approval counts at once', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '1000' });
  const w = await f.withdraw();
  const added = await f.cli(['member', 'add', '--account', f.accountId, '--email', 'ops@shop.test', '--role', 'admin']);
  t.is(added.code, 0, added.stderr);
  t.like(added.json.member, { email: 'ops@shop.test', role: 'admin' });
  const log = await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'member.added' });
  t.deepEqual(
    log.map((e) => [e.actor, JSON.parse(e.details).email]),
    [['operator', 'ops@shop.test']],
  );

  const res = await f.approve(w.id, 'ops@shop.test', new OtpSource(added.json.member.totp_secret, f.clock));
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.status, 'pending');
  t.deepEqual(await approvedBy(f, w.id), ['ops@shop.test']);
});

test('the holder of the requesting key secret may not approve its withdrawal, awaiting approval or in review (approver_created_key); rejecting stays theirs to do', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '1000' });
  const awaiting = await f.withdraw({ payout_id: 'awaiting' });
  await f.setAccount({ dual_approval_threshold: null, daily_withdrawal_limit: '1000' });
  const review = await f.withdraw({ payout_id: 'review' });
  t.like(review, { status: 'review', review_reason: 'limit' });

  await refusedApproval(t, f, awaiting.id, f.owner, f.ownerOtp, 'approver_created_key');
  f.clock.advance(60_000);
  await refusedApproval(t, f, review.id, f.owner, f.ownerOtp, 'approver_created_key');
  const rejected = await f.cli(['withdrawals', 'reject', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), '--yes', review.id]);
  t.is(rejected.code, 0, rejected.stderr);
  t.is(rejected.json.status, 'rejected');
});

test('a pattern review is not approved by the admin whose whitelist change sent it there (approver_made_change); another admin approves it', async (t) => {
  const f = await fixture(t);
  const changer = new OtpSource(
    (await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'changer@shop.test', 'admin')).member.totp_secret,
    f.clock,
  );
  const other = new OtpSource((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'other@shop.test', 'admin')).member.totp_secret, f.clock);
  const listed = await f.cli([
    'whitelist',
    'add',
    '--account',
    f.accountId,
    '--as',
    'changer@shop.test',
    '--otp',
    changer.next(),
    '--coin',
    COINS.BTC,
    '--address',
    PAY_TO,
  ]);
  t.is(listed.code, 0, listed.stderr);
  const w = await f.withdraw();
  t.like(w, { status: 'review', review_reason: 'pattern' });

  await refusedApproval(t, f, w.id, 'changer@shop.test', changer, 'approver_made_change');
  const res = await f.approve(w.id, 'other@shop.test', other);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'pending', review_reason: 'pattern' });
  t.deepEqual(await approvedBy(f, w.id), ['other@shop.test']);
});
