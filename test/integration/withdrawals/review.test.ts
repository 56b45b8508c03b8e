import test, { type ExecutionContext } from 'ava';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { FakeClock } from '../../../src/shared/clock';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile } from '../../helpers/daemon';
import { RealOtp } from '../../helpers/cli-otp';
import { COINS } from '../../helpers/invoice-fixture';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

const body = (over: Record<string, unknown> = {}) => ({ coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO, ...over });

async function fixture(t: ExecutionContext): Promise<WithdrawalFixture & { cli(args: string[]): ReturnType<typeof runBin> }> {
  const f = await startWithdrawalFixture();
  t.teardown(() => f.stop());
  await f.fund('1');
  const config = cliConfigFile(f.td);
  return Object.assign(f, { cli: (args: string[]) => runBin(COINKEEP_BIN, ['--config', config, '--json', ...args], { timeoutMs: 60_000 }) });
}

const eventsOf = async (f: WithdrawalFixture, id: string): Promise<Array<{ type: string; withdrawal: Record<string, unknown> }>> =>
  (await f.td.daemon.store.read.query(`SELECT type, body FROM events WHERE object_id = '${id}' ORDER BY seq`)).map((e: { type: string; body: string }) => ({
    type: e.type,
    withdrawal: JSON.parse(e.body).data.withdrawal,
  }));

test('above the dual-approval threshold a withdrawal awaits a second approval: not from the key secret holder, then from an admin through the CLI', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '1000' }); // 0.1 BTC is 6800 USD at the test rates
  const w = await f.api.post('/v1/withdrawals', body());
  t.is(w.status, 201, JSON.stringify(w.body));
  t.is(w.body.status, 'awaiting_approval');
  t.deepEqual(await eventsOf(f, w.body.id), [{ type: 'withdrawal.awaiting_approval', withdrawal: w.body }]);
  t.deepEqual(await f.balance(), { available: '0.899975', hold: '0.100025' });

  const listed = await f.cli(['withdrawals', 'list', '--account', f.accountId, '--as', f.owner, '--status', 'awaiting_approval']);
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(
    listed.json.items.map((i: { id: string }) => i.id),
    [w.body.id],
  );

  // The owner holds the secret of the key that asked: their approval is not the second one.
  const own = await f.cli(['withdrawals', 'approve', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), w.body.id]);
  t.not(own.code, 0);
  t.regex(own.stderr, /forbidden/);
  t.is((await f.api.get(`/v1/withdrawals/${w.body.id}`)).body.status, 'awaiting_approval');

  const added = await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@example.com', 'admin');
  const adminOtp = new RealOtp(added.member.totp_secret);
  const approved = await f.cli(['withdrawals', 'approve', '--account', f.accountId, '--as', 'admin@example.com', '--otp', await adminOtp.next(), w.body.id]);
  t.is(approved.code, 0, approved.stderr);
  t.is(approved.json.status, 'pending');
  t.is((await f.api.get(`/v1/withdrawals/${w.body.id}`)).body.status, 'pending');
  t.deepEqual(await f.balance(), { available: '0.899975', hold: '0.100025' }, 'still held');
  const log = await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'withdrawal.approved' });
  t.is(log.length, 1);
  t.is(log[0]!.actor, 'admin@example.com');
});

test('a rejected withdrawal returns its whole total_debit to available and sends withdrawal.rejected', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '1000' });
  const w = await f.api.post('/v1/withdrawals', body());
  const rejected = await f.cli(['withdrawals', 'reject', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), w.body.id]);
  t.is(rejected.code, 0, rejected.stderr);
  t.is(rejected.json.status, 'rejected');
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
  const events = await eventsOf(f, w.body.id);
  t.deepEqual(
    events.map((e) => e.type),
    ['withdrawal.awaiting_approval', 'withdrawal.rejected'],
  );
  t.deepEqual(events[1]!.withdrawal, (await f.api.get(`/v1/withdrawals/${w.body.id}`)).body);
  const again = await f.cli(['withdrawals', 'approve', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), w.body.id]);
  t.not(again.code, 0, 'a decided withdrawal is not decided again');
});

test('after a security change a withdrawal goes to review (pattern); undecided for 24 hours it is rejected and released', async (t) => {
  const f = await fixture(t);
  await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'new@example.com', 'developer');
  const w = await f.api.post('/v1/withdrawals', body());
  t.like(w.body, { status: 'review', review_reason: 'pattern' });
  t.deepEqual(
    (await eventsOf(f, w.body.id)).map((e) => e.type),
    ['withdrawal.review'],
  );

  t.is(await f.td.daemon.withdrawals.service.expireReviews(), 0, 'not yet');
  const dayAgo = new Date(Date.now() - 24 * 3600 * 1000 - 1000).toISOString();
  await f.td.daemon.store.write((em) => em.update(WithdrawalEntity, { id: w.body.id }, { created_at: dayAgo, updated_at: dayAgo }));
  t.is(await f.td.daemon.withdrawals.service.expireReviews(), 1);
  t.is((await f.api.get(`/v1/withdrawals/${w.body.id}`)).body.status, 'rejected');
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
  t.deepEqual(
    (await eventsOf(f, w.body.id)).map((e) => e.type),
    ['withdrawal.review', 'withdrawal.rejected'],
  );
  const expired = await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'withdrawal.review_expired' });
  t.deepEqual(
    expired.map((e) => [e.actor, JSON.parse(e.details).withdrawal_id]),
    [['system', w.body.id]],
  );
});

test('an enforced whitelist accepts only its active addresses; whitelist add and remove go through the CLI with a two-factor code', async (t) => {
  const f = await fixture(t);
  const enforce = await f.cli(['account', 'set', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), 'withdrawal_whitelist_enforced=true']);
  t.is(enforce.code, 0, enforce.stderr);
  t.is((await f.api.post('/v1/withdrawals', body())).status, 403);

  const noOtp = await f.cli(['whitelist', 'add', '--account', f.accountId, '--as', f.owner, '--coin', COINS.BTC, '--address', PAY_TO]);
  t.not(noOtp.code, 0);
  const added = await f.cli([
    'whitelist',
    'add',
    '--account',
    f.accountId,
    '--as',
    f.owner,
    '--otp',
    f.ownerOtp.next(),
    '--coin',
    COINS.BTC,
    '--address',
    PAY_TO,
    '--label',
    'supplier',
  ]);
  t.is(added.code, 0, added.stderr);
  const listed = await f.cli(['whitelist', 'list', '--account', f.accountId, '--as', f.owner]);
  t.deepEqual(
    listed.json.items.map((e: { address: string }) => e.address),
    [PAY_TO],
  );
  // Whitelist changes are security changes: payouts go to review for a day.
  const w = await f.api.post('/v1/withdrawals', body());
  t.is(w.status, 201, JSON.stringify(w.body));
  t.like(w.body, { status: 'review', review_reason: 'pattern' });

  // The owner's codes of this minute are spent: an admin removes it.
  const admin = await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@example.com', 'admin');
  const adminOtp = new RealOtp(admin.member.totp_secret);
  const removed = await f.cli(['whitelist', 'remove', '--account', f.accountId, '--as', 'admin@example.com', '--otp', await adminOtp.next(), added.json.id]);
  t.is(removed.code, 0, removed.stderr);
  const refused = await f.api.post('/v1/withdrawals', body({ amount: '0.2' }));
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'forbidden');
  const actions = (await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId })).map((e) => e.action);
  t.true(actions.includes('whitelist.added') && actions.includes('whitelist.removed'));
});

test('with a dual-approval threshold and no current rate in the default fiat, a withdrawal is 503 unavailable and nothing is held', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ dual_approval_threshold: '100000', default_fiat: 'JPY' }); // the test rates have no JPY
  const res = await f.api.post('/v1/withdrawals', body(), { 'Idempotency-Key': 'no-rate' });
  t.is(res.status, 503, JSON.stringify(res.body));
  t.is(res.body.error.code, 'unavailable');
  t.deepEqual(await f.counts(), { withdrawals: 0, holds: 0 });
  t.deepEqual(await f.balance(), { available: '1', hold: '0' });
  await f.setAccount({ default_fiat: 'USD' });
  const ok = await f.api.post('/v1/withdrawals', body(), { 'Idempotency-Key': 'no-rate' });
  t.is(ok.status, 201, 'the key stayed free');
  t.is(ok.body.status, 'pending', '6800 USD is under the threshold');
});

test('a withdrawal above the signer cap of payouts.max_per_transaction waits in review with signer_limit', async (t) => {
  const f = await startWithdrawalFixture({ overrides: { payouts: { max_per_transaction: { BTC: '5000' } } } });
  t.teardown(() => f.stop());
  await f.fund('1');
  const small = await f.api.post('/v1/withdrawals', body({ amount: '0.05' })); // 3400 USD
  t.like(small.body, { status: 'pending', review_reason: null });
  const large = await f.api.post('/v1/withdrawals', body({ amount: '0.1' })); // 6800 USD
  t.like(large.body, { status: 'review', review_reason: 'signer_limit' });
  t.deepEqual(
    (await eventsOf(f, large.body.id)).map((e) => e.type),
    ['withdrawal.review'],
  );
});

test('withdrawals beyond the account daily limit within 24 hours wait in review with limit', async (t) => {
  const f = await fixture(t);
  await f.setAccount({ daily_withdrawal_limit: '10000' });
  const first = await f.api.post('/v1/withdrawals', body()); // 6800 USD
  t.like(first.body, { status: 'pending', review_reason: null });
  const second = await f.api.post('/v1/withdrawals', body()); // 13600 USD in 24 hours
  t.like(second.body, { status: 'review', review_reason: 'limit' });
  // A cancelled withdrawal no longer counts.
  await f.api.post(`/v1/withdrawals/${first.body.id}/cancel`);
  await f.api.post(`/v1/withdrawals/${second.body.id}/cancel`);
  t.like((await f.api.post('/v1/withdrawals', body())).body, { status: 'pending' });
});

test('the daily limit counts the last 24 hours by creation time; its day sums follow creations and cancels', async (t) => {
  // 10:00:00: the window of a request at 10:01 the next day starts in the same ten minutes as the first withdrawal.
  const clock = new FakeClock('2026-03-01T10:00:00.000Z');
  const f = await startWithdrawalFixture({ clock });
  t.teardown(() => f.stop());
  await f.fund('1');
  await f.setAccount({ daily_withdrawal_limit: '10000' });
  const daySums = async () =>
    (await f.td.daemon.store.read.query('SELECT bucket, total FROM withdrawal_day_totals ORDER BY bucket')).map((r: { bucket: string; total: string }) => [
      r.bucket,
      r.total,
    ]);
  const first = await f.api.post('/v1/withdrawals', body()); // 6800 USD
  t.like(first.body, { status: 'pending' });
  t.deepEqual(await daySums(), [['2026-03-01T10:0', '0.1']]);

  clock.advance(24 * 3600 * 1000 - 60 * 1000); // 09:59 the next day: the first one counts
  const second = await f.api.post('/v1/withdrawals', body());
  t.like(second.body, { status: 'review', review_reason: 'limit' });
  t.deepEqual(await daySums(), [
    ['2026-03-01T10:0', '0.1'],
    ['2026-03-02T09:5', '0.1'],
  ]);
  await f.api.post(`/v1/withdrawals/${second.body.id}/cancel`);
  t.deepEqual(
    await daySums(),
    [
      ['2026-03-01T10:0', '0.1'],
      ['2026-03-02T09:5', '0'],
    ],
    'a cancelled withdrawal no longer counts',
  );

  clock.advance(2 * 60 * 1000); // 10:01: the first one is 24 h 1 min old, though its ten minutes are still in the window
  t.like((await f.api.post('/v1/withdrawals', body())).body, { status: 'pending' });
  clock.advance(60 * 1000);
  t.like((await f.api.post('/v1/withdrawals', body())).body, { status: 'review', review_reason: 'limit' }, 'the one of 10:01 counts');

  // Day sums older than two days are deleted by the review expiry job.
  clock.advance(2 * 24 * 3600 * 1000 - 5 * 60 * 1000); // 09:57 two days on: the first day's sums go, the second's stay
  await f.td.daemon.withdrawals.service.expireReviews();
  t.deepEqual(
    (await daySums()).map(([bucket]: [string]) => bucket),
    ['2026-03-02T09:5', '2026-03-02T10:0'],
  );
});

test('the daily limit is exact at its edge: reaching it is allowed, a thousandth of a dollar more goes to review', async (t) => {
  const f = await fixture(t);
  const small = body({ amount: '0.00001' }); // 0.68 USD
  await f.setAccount({ daily_withdrawal_limit: '13601.36' });
  t.like((await f.api.post('/v1/withdrawals', body())).body, { status: 'pending' }); // 6800 USD
  t.like((await f.api.post('/v1/withdrawals', body())).body, { status: 'pending' }); // 13600 USD
  t.like((await f.api.post('/v1/withdrawals', small)).body, { status: 'pending' }); // 13600.68 USD
  // Within a millionth of the limit the database's floating-point sum does not decide: the exact one does.
  t.like((await f.api.post('/v1/withdrawals', small)).body, { status: 'pending' }); // 13601.36 USD: the limit itself
  await f.setAccount({ daily_withdrawal_limit: '13602.039' });
  t.like((await f.api.post('/v1/withdrawals', small)).body, { status: 'review', review_reason: 'limit' }); // 13602.04 USD
});
