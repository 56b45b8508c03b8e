/**
 * Issue 33 §3: `coinkeep refunds list|show|cancel` over the admin socket as a member (--account,
 * --as EMAIL; cancel with a two-factor code like `withdrawals cancel`): any member reads and
 * cancels, the cancel is in the security log, refusals change nothing.
 */
import test from 'ava';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';
import { seedRefundable, type RefundSeed } from '../../helpers/refund-seed';
import { PAY_TO } from '../../helpers/withdrawal-fixture';

const DEV = 'dev@refunds.test';
let s: RefundSeed;
let api: ApiClient;
let dev: RealOtp;
const cli = (args: string[]) => runBin(COINKEEP_BIN, ['--config', cliConfigFile(s.fx.td), '--json', ...args], { timeoutMs: 60_000 });

test.before(async () => {
  s = await seedRefundable();
  api = new ApiClient(s.fx.td.url, s.keyId, s.secret);
  dev = new RealOtp((await s.fx.td.daemon.team.addMember(s.fx.accountId, { kind: 'operator' }, DEV, 'developer')).member.totp_secret);
});
test.after.always(async () => {
  await s?.fx.stop();
});

const refund = async (body: Record<string, unknown>) => {
  const r = await api.post('/v1/refunds', body);
  if (r.status !== 201) throw new Error(`refund: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const refunded = async (id: string) => (await s.fx.td.daemon.store.read.findOneByOrFail(InvoiceEntity, { id })).refunded_amount;

test.serial(
  'a member lists (by status too) and shows refunds; a developer cancels one waiting for its address and one with a withdrawal, each in the security log',
  async (t) => {
    const waiting = await refund({ invoice_id: s.paidInvoiceId, amount: '0.0002', refund_id: 'cli-waiting' });
    const sent = await refund({ invoice_id: s.paidInvoiceId, amount: '0.0001', to_address: PAY_TO, refund_id: 'cli-sent' });
    t.is(waiting.status, 'awaiting_address');
    t.not(sent.withdrawal_id, null);
    t.is(await refunded(s.paidInvoiceId), '0.0003');

    const base = ['--account', s.fx.accountId, '--as', DEV];
    const list = await cli(['refunds', 'list', ...base]);
    t.is(list.code, 0, list.stderr);
    t.deepEqual(
      list.json.items.map((r: { id: string }) => r.id),
      [sent.id, waiting.id],
      'newest first',
    );
    const awaiting = await cli(['refunds', 'list', ...base, '--status', 'awaiting_address']);
    t.deepEqual(
      awaiting.json.items.map((r: { id: string }) => r.id),
      [waiting.id],
    );
    const badStatus = await cli(['refunds', 'list', ...base, '--status', 'nope']);
    t.is(badStatus.code, 1);
    t.like(JSON.parse(badStatus.stderr).error, { code: 'validation_error', details: { field: 'status' } });
    const shown = await cli(['refunds', 'show', ...base, waiting.id]);
    t.is(shown.code, 0, shown.stderr);
    t.like(shown.json, { id: waiting.id, status: 'awaiting_address', amount: '0.0002', invoice_id: s.paidInvoiceId, refund_id: 'cli-waiting' });
    t.regex(shown.json.refund_url, new RegExp(`/pay/${s.paidInvoiceId}/refund/`));
    const text = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(s.fx.td), 'refunds', 'list', ...base]);
    t.regex(text.stdout, new RegExp(`${waiting.id} +awaiting_address +0\\.0002 BTC +invoice ${s.paidInvoiceId} -> the payer’s address \\(link sent\\)`));
    t.regex(text.stdout, new RegExp(`${sent.id} +\\w+ +0\\.0001 BTC +invoice ${s.paidInvoiceId} -> ${PAY_TO}`));

    for (const r of [waiting, sent]) {
      const c = await cli(['refunds', 'cancel', ...base, '--otp', await dev.next(), r.id]);
      t.is(c.code, 0, c.stderr);
      t.like(c.json, { id: r.id, status: 'cancelled' });
      t.is((await api.get(`/v1/refunds/${r.id}`)).body.status, 'cancelled');
    }
    t.is(await refunded(s.paidInvoiceId), '0', 'what was refunded may be refunded again');
    t.is((await api.get(`/v1/withdrawals/${sent.withdrawal_id}`)).body.status, 'cancelled');
    const log = await s.fx.td.daemon.store.read.find(SecurityLogEntity, {
      where: { account_id: s.fx.accountId, action: 'refund.cancelled' },
      order: { created_at: 'ASC' },
    });
    t.deepEqual(
      log.map((e) => {
        const d = JSON.parse(e.details);
        return [e.actor, d.refund_id, d.from, d.amount, d.invoice_id];
      }),
      [
        [DEV, waiting.id, 'awaiting_address', '0.0002', s.paidInvoiceId],
        [DEV, sent.id, sent.status, '0.0001', s.paidInvoiceId],
      ],
    );
  },
);

test.serial('refusals change nothing: not a member, a wrong two-factor code, a refund already cancelled, another account’s or no refund', async (t) => {
  const r = await refund({ invoice_id: s.paidInvoiceId, amount: '0.0001' });
  const cancel = async (as: string, otp: string, id = r.id) => {
    const c = await cli(['refunds', 'cancel', '--account', s.fx.accountId, '--as', as, '--otp', otp, id]);
    const { code, details } = JSON.parse(c.stderr).error;
    return { exit: c.code, code, details };
  };
  t.deepEqual(await cancel('stranger@elsewhere.test', '123456'), { exit: 1, code: 'forbidden', details: {} });
  t.deepEqual(await cancel(DEV, '000000'), { exit: 1, code: 'forbidden', details: { field: 'otp' } });
  t.is((await api.get(`/v1/refunds/${r.id}`)).body.status, 'awaiting_address');
  t.is(await refunded(s.paidInvoiceId), '0.0001');
  // The owner's code here (a member's codes come about one per 30 s step).
  t.deepEqual(await cancel(s.fx.owner, s.fx.ownerOtp.next(), '00000000-0000-4000-8000-000000000000'), { exit: 1, code: 'not_found', details: {} });
  const ok = await cli(['refunds', 'cancel', '--account', s.fx.accountId, '--as', DEV, '--otp', await dev.next(), r.id]);
  t.is(ok.code, 0, ok.stderr);
  t.deepEqual(await cancel(DEV, await dev.next()), { exit: 1, code: 'conflict', details: { status: 'cancelled' } });
  const other = await s.fx.td.daemon.team.createAccount('Other shop', 'owner@other.test');
  const elsewhere = await cli(['refunds', 'show', '--account', other.account.id, '--as', 'owner@other.test', r.id]);
  t.is(elsewhere.code, 1);
  t.is(JSON.parse(elsewhere.stderr).error.code, 'not_found');
  const outsider = await cli(['refunds', 'list', '--account', s.fx.accountId, '--as', 'owner@other.test']);
  t.is(JSON.parse(outsider.stderr).error.code, 'forbidden');
});
