/**
 * Issue 33 §3: the dashboard's Refunds screen (7) lists the invoices that need a decision
 * (overpaid with excess left, underpaid past the TTL and not accepted, paid late), each with what a
 * refund could still take, and the refunds in flight or waiting for the payer's address; c cancels
 * one as a member (confirm, two-factor code), as `coinkeep refunds cancel` does.
 */
import test from 'ava';
import type { DashboardSnapshot } from '../../../src/admin/contract';
import { adminCall } from '../../../src/cli/admin-client';
import { Amount } from '../../../src/shared/amount';
import { InvoiceEntity, type InvoiceRow } from '../../../src/db/entities/money';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { RealOtp } from '../../helpers/cli-otp';
import { ApiClient, COINS } from '../../helpers/invoice-fixture';
import { KEY, renderDashboard } from '../../helpers/ink';
import { tempPostgres } from '../../helpers/pg-database';
import { seedRefundable, type RefundSeed } from '../../helpers/refund-seed';

const ADMIN = 'admin@refunds-dash.test';
let s: RefundSeed;
let api: ApiClient;
let adminOtp: RealOtp;
let lateId: string;
let openId: string;

const patch = (id: string, p: Partial<InvoiceRow>) => s.fx.td.daemon.store.write((em) => em.update(InvoiceEntity, { id }, p));
const snapshot = () => adminCall<DashboardSnapshot>(s.fx.td.dataDir, 'GET', `/admin/dashboard?screen=refunds&account=${s.fx.accountId}`);
const past = () => new Date(Date.now() - 60_000).toISOString();

/** The paid invoice received 0.0004 more than it asked; a third one was paid after it expired (its id). */
async function arrange(seed: RefundSeed, client: ApiClient): Promise<string> {
  const write = (id: string, p: Partial<InvoiceRow>) => seed.fx.td.daemon.store.write((em) => em.update(InvoiceEntity, { id }, p));
  const paid = await seed.fx.td.daemon.store.read.findOneByOrFail(InvoiceEntity, { id: seed.paidInvoiceId });
  await write(seed.paidInvoiceId, { overpaid_amount: '0.0004', paid_amount: Amount.of(paid.paid_amount).plus(Amount.of('0.0004')).toString() });
  const late = await client.post('/v1/invoices', { amount: '0.002', currency: 'BTC', coin_id: COINS.BTC });
  await write(late.body.id, { status: 'expired', late_payment: true, paid_amount: '0.0003', ttl_expires_at: past() });
  return late.body.id as string;
}

test.before(async () => {
  s = await seedRefundable();
  api = new ApiClient(s.fx.td.url, s.keyId, s.secret);
  adminOtp = new RealOtp((await s.fx.td.daemon.team.addMember(s.fx.accountId, { kind: 'operator' }, ADMIN, 'admin')).member.totp_secret);
  lateId = await arrange(s, api);
});
test.after.always(async () => {
  await s?.fx.stop();
});

test.serial('the refunds snapshot: overpaid (the excess left), paid late, and underpaid only once final and not accepted; refunds open', async (t) => {
  const first = (await snapshot()).refunds!;
  t.deepEqual(
    first.decisions.map((d) => [d.kind, d.invoice_id, d.refundable, d.ticker]),
    [
      ['late', lateId, '0.0003', 'BTC'],
      ['overpaid', s.paidInvoiceId, '0.0004', 'BTC'],
    ],
    'the underpaid invoice is still open to top-ups: no decision yet',
  );
  t.deepEqual(first.open, []);

  await patch(s.underpaidInvoiceId, { ttl_expires_at: past() });
  const underpaid = await s.fx.td.daemon.store.read.findOneByOrFail(InvoiceEntity, { id: s.underpaidInvoiceId });
  t.deepEqual(
    (await snapshot()).refunds!.decisions.map((d) => [d.kind, d.invoice_id, d.refundable]),
    [
      ['late', lateId, '0.0003'],
      ['underpaid', s.underpaidInvoiceId, underpaid.paid_amount],
      ['overpaid', s.paidInvoiceId, '0.0004'],
    ],
  );
  await patch(s.underpaidInvoiceId, { resolution: 'accepted_underpayment' });
  t.false(
    (await snapshot()).refunds!.decisions.some((d) => d.invoice_id === s.underpaidInvoiceId),
    'accepted: decided',
  );
  await patch(s.underpaidInvoiceId, { resolution: null });

  // Part of the excess refunded: the rest is what is left to decide; all of it: no decision.
  const part = await api.post('/v1/refunds', { invoice_id: s.paidInvoiceId, amount: '0.0001' });
  t.is(part.status, 201, JSON.stringify(part.body));
  t.like(
    (await snapshot()).refunds!.decisions.find((d) => d.invoice_id === s.paidInvoiceId),
    { refundable: '0.0003', refunded_amount: '0.0001' },
  );
  const rest = await api.post('/v1/refunds', { invoice_id: s.paidInvoiceId, amount: 'excess' });
  t.like(rest.body, { status: 'awaiting_address', amount: '0.0003' });
  const after = (await snapshot()).refunds!;
  t.false(after.decisions.some((d) => d.invoice_id === s.paidInvoiceId));
  t.deepEqual(
    after.open.map((r) => [r.id, r.status, r.amount, r.account_id]),
    [
      [rest.body.id, 'awaiting_address', '0.0003', s.fx.accountId],
      [part.body.id, 'awaiting_address', '0.0001', s.fx.accountId],
    ],
  );
  openId = rest.body.id;
  const cancelled = await api.post(`/v1/refunds/${part.body.id}/cancel`, {});
  t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
});

test.serial(
  'Refunds (7) shows the decisions and the open refunds; c cancels a refund after asking, with the member’s code, and the excess is back to decide',
  async (t) => {
    const r = await renderDashboard(s.fx.td.dataDir, { as: ADMIN });
    t.teardown(() => r.unmount());
    await r.press('7');
    const frame = await r.waitFor(new RegExp(`refund ${openId}`));
    t.regex(frame, / 6 Log {2}7 Refunds /);
    t.regex(frame, /Invoices that need a decision/);
    t.regex(frame, new RegExp(`› ?invoice ${lateId} +paid late +refundable 0\\.0003 BTC `));
    t.regex(frame, new RegExp(`invoice ${s.underpaidInvoiceId} +underpaid, final +refundable 0\\.0005 BTC `));
    t.regex(frame, new RegExp(`invoice ${s.paidInvoiceId} +overpaid +refundable 0\\.0001 BTC `), 'the excess less the open refund');
    t.regex(frame, new RegExp(`refund ${openId} +awaiting_address +0\\.0003 BTC -> payer link`));

    await r.press('c');
    await r.waitFor(/c cancels a refund: move the cursor onto one/);
    await r.press(KEY.down, KEY.down, KEY.down);
    await r.waitFor(new RegExp(`› ?refund ${openId}`));
    await r.press('c');
    await r.waitFor(new RegExp(`Cancel refund ${openId.slice(-8)} \\(its amount may be refunded again\\)\\? \\[y/N\\]`));
    await r.press('y');
    await r.waitFor(/Two-factor code of admin@refunds-dash\.test to cancel refund/);
    for (const d of await adminOtp.next()) await r.press(d);
    await r.press(KEY.enter);
    await r.waitFor(new RegExp(`refund ${openId}: cancelled`));
    const back = await r.waitFor(new RegExp(`invoice ${s.paidInvoiceId} +overpaid +refundable 0\\.0004 BTC `));
    t.regex(back, /Refunds in flight or waiting for the payer's address \(c cancel\)\n\s*none/);
    t.is((await api.get(`/v1/refunds/${openId}`)).body.status, 'cancelled');
    const log = await s.fx.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: s.fx.accountId, action: 'refund.cancelled' });
    t.deepEqual(
      log.map((e) => [e.actor, JSON.parse(e.details).refund_id]),
      [[ADMIN, openId]],
    );
  },
);

test.serial('without --as the dashboard says who may cancel, and changes nothing; keys faster than frames each move the cursor', async (t) => {
  const made = await api.post('/v1/refunds', { invoice_id: s.paidInvoiceId, amount: 'excess' });
  const r = await renderDashboard(s.fx.td.dataDir);
  t.teardown(() => r.unmount());
  await r.press('7');
  await r.waitFor(new RegExp(`refund ${made.body.id}`));
  // Three keys before the next frame: each moves on from where the last one left the cursor.
  r.pressAtOnce(KEY.down, KEY.down, KEY.down);
  await r.waitFor(new RegExp(`› ?refund ${made.body.id}`));
  await r.press('c');
  await r.waitFor(/start the dashboard with --as EMAIL/);
  t.is((await api.get(`/v1/refunds/${made.body.id}`)).body.status, 'awaiting_address');
});

test('on PostgreSQL the decisions are the same (the boolean and the string compares of its dialect)', async (t) => {
  const pg = await seedRefundable({ overrides: { database: { url: await tempPostgres(t) } } });
  t.teardown(() => pg.fx.stop());
  const client = new ApiClient(pg.fx.td.url, pg.keyId, pg.secret);
  const late = await arrange(pg, client);
  await pg.fx.td.daemon.store.write((em) => em.update(InvoiceEntity, { id: pg.underpaidInvoiceId }, { ttl_expires_at: past() }));
  const made = await client.post('/v1/refunds', { invoice_id: pg.paidInvoiceId, amount: '0.0001' });
  t.is(made.status, 201, JSON.stringify(made.body));
  const snap = await adminCall<DashboardSnapshot>(pg.fx.td.dataDir, 'GET', `/admin/dashboard?screen=refunds&account=${pg.fx.accountId}`);
  t.deepEqual(
    snap.refunds!.decisions.map((d) => [d.kind, d.invoice_id, d.refundable]),
    [
      ['late', late, '0.0003'],
      ['underpaid', pg.underpaidInvoiceId, (await pg.fx.td.daemon.store.read.findOneByOrFail(InvoiceEntity, { id: pg.underpaidInvoiceId })).paid_amount],
      ['overpaid', pg.paidInvoiceId, '0.0003'],
    ],
  );
  t.deepEqual(
    snap.refunds!.open.map((r) => r.id),
    [made.body.id],
  );
});
