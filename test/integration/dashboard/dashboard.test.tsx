import test from 'ava';
import { ApiKeyEntity } from '../../../src/db/entities/auth';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { WebhookDeliveryEntity } from '../../../src/db/entities/webhooks';
import { COINKEEP_BIN, runBin, until } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile } from '../../helpers/daemon';
import { KEY, renderDashboard } from '../../helpers/ink';
import { COINS } from '../../helpers/invoice-fixture';
import { recordTransaction } from '../../helpers/money-fixtures';
import { WebhookSink } from '../../helpers/webhook-sink';
import { PAY_TO, startWithdrawalFixture, type WithdrawalFixture } from '../../helpers/withdrawal-fixture';

/**
 * Issue 21 §1 and §3: each screen of `coinkeep dashboard` rendered with ink-testing-library against
 * a test daemon over its admin socket; keys pressed, the frame's text asserted.
 */

let f: WithdrawalFixture;
let sink: WebhookSink;
let adminOtp: RealOtp;
let endpointId: string;
const ADMIN = 'admin@dash.test';

test.before(async () => {
  f = await startWithdrawalFixture();
  sink = await WebhookSink.start();
  await f.fund('1');
  await f.setAccount({ dual_approval_threshold: '1000' }); // 0.1 BTC is 6800 USD at the test rates
  const added = await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, ADMIN, 'admin');
  adminOtp = new RealOtp(added.member.totp_secret);
  const hooks = await f.key(['read', 'create_invoice']);
  const ep = await hooks.post('/v1/webhooks/endpoints', { url: sink.url('/hook'), event_types: ['*'] });
  if (ep.status !== 201) throw new Error(JSON.stringify(ep.body));
  endpointId = ep.body.id;
});
test.after.always(async () => {
  await f?.stop();
  await sink?.close();
});

const withdraw = async (): Promise<string> => {
  const w = await f.api.post('/v1/withdrawals', { coin_id: COINS.BTC, amount: '0.1', to_address: PAY_TO });
  if (w.body.status !== 'awaiting_approval') throw new Error(JSON.stringify(w.body));
  return w.body.id as string;
};

test.serial(
  'Overview shows the daemon, each chain with tip, scanned height and lag, queues and balances, and says where fee balances are not reported',
  async (t) => {
    const id = await withdraw();
    const r = await renderDashboard(f.td.dataDir);
    t.teardown(() => r.unmount());
    const frame = await r.waitFor(/payouts: awaiting_approval 1/);
    t.regex(frame, /Coinkeep {2}testnet · sqlite · up \d+m · pid \d+/);
    t.regex(frame, / 1 Overview {2}2 Payments {2}3 Approvals {2}4 Webhooks {2}5 Keys {2}6 Log {2}7 Refunds /);
    for (const chain of ['bitcoin', 'ethereum', 'tron']) t.regex(frame, new RegExp(`${chain} +tip `));
    t.regex(frame, /fee balances: no chain pays gas from a gas station/);
    t.regex(frame, /webhooks: pending \d+ {2}failing 0 {2}exhausted 0/);
    t.regex(frame, /Test shop +BTC +0\.799975 +\/ 0\.200025|Test shop +BTC +0\.899975 +\/ 0\.100025/);
    await f.td.daemon.withdrawals.service.decide(f.accountId, id, { kind: 'member', email: ADMIN, otp: await adminOtp.next() }, 'reject');
  },
);

test.serial('the number keys, the arrows and ? move between screens; l filters the log by level', async (t) => {
  const r = await renderDashboard(f.td.dataDir);
  t.teardown(() => r.unmount());
  await r.waitFor(/Chains/);
  await r.press('2');
  await r.waitFor(/Payments \(newest first\)/);
  await r.press(KEY.right);
  await r.waitFor(/Waiting for an owner or admin/);
  await r.press('?');
  t.regex(await r.waitFor(/q or Ctrl-C +quit/), /Approvals +y approve · n reject/);
  await r.press(KEY.escape, '6');
  t.regex(await r.waitFor(/coinkeepd started/), /info +coinkeepd started/);
  await r.press('l');
  // The level filter hides info lines once the next snapshot is in.
  t.regex(await r.waitFor(/^(?![\s\S]*coinkeepd started)[\s\S]*l level: warn\+/), /warn +rate source/);
});

test.serial('Payments shows the newest deposits and invoices with status, amount and coin, and updates when a payment arrives', async (t) => {
  const r = await renderDashboard(f.td.dataDir);
  t.teardown(() => r.unmount());
  await r.press('2');
  t.regex(await r.waitFor(/confirmed 1 +BTC/), /deposit/);
  const shop = await f.key(['read', 'create_invoice']);
  const inv = await shop.post('/v1/invoices', { amount: '12.50', currency: 'USD' });
  t.is(inv.status, 201, JSON.stringify(inv.body));
  t.regex(await r.waitFor(new RegExp(`${inv.body.id.slice(-8)} new +12\\.5 USD`)), /Invoices \(newest first\)/);
  await f.fund('0.25');
  await r.waitFor(/confirmed 0\.25 +BTC/);
});

test.serial('a steps the view through every account and back to all; Payments shows only the account in view', async (t) => {
  const other = await f.td.daemon.team.createAccount('Other shop', 'owner@other.test');
  await recordTransaction(f.td.daemon.store, { accountId: other.account.id, coinId: COINS.BTC, type: 'deposit', amount: '0.0424242' });
  const r = await renderDashboard(f.td.dataDir);
  t.teardown(() => r.unmount());
  await r.press('2');
  const all = await r.waitFor(/confirmed 0\.0424242 /);
  t.regex(all, /\[all accounts · a: change\]/);
  t.regex(all, /confirmed 1 +BTC/);
  await r.press('a');
  const first = await r.waitFor(/^(?![\s\S]*0\.0424242)[\s\S]*\[account Test shop/);
  t.regex(first, /confirmed 1 +BTC/);
  await r.press('a');
  t.notRegex(await r.waitFor(/^(?![\s\S]*confirmed 1 +BTC)[\s\S]*\[account Other shop[\s\S]*0\.0424242/), /Test shop/);
  await r.press('a');
  await r.waitFor(/\[all accounts · a: change\][\s\S]*0\.0424242[\s\S]*confirmed 1 +BTC/);
});

test.serial(
  'Approvals: a wrong code and the requester’s own approval are refused inline as the CLI says them; an admin’s approval lands in the security log exactly like a CLI approval',
  async (t) => {
    const viaCli = await withdraw();
    const viaDashboard = await withdraw();

    const cli = await runBin(
      COINKEEP_BIN,
      ['--config', cliConfigFile(f.td), 'withdrawals', 'approve', '--account', f.accountId, '--as', ADMIN, '--otp', await adminOtp.next(), viaCli],
      { timeoutMs: 60_000 },
    );
    t.is(cli.code, 0, cli.stderr);

    // Without --as the dashboard says who may act, and changes nothing.
    const anon = await renderDashboard(f.td.dataDir);
    await anon.press('3');
    await anon.waitFor(new RegExp(viaDashboard));
    await anon.press('y');
    await anon.waitFor(/start the dashboard with --as EMAIL/);
    anon.unmount();

    // The owner holds the secret of the key that asked: refused as the CLI refuses it.
    const owner = await renderDashboard(f.td.dataDir, { as: f.owner });
    t.teardown(() => owner.unmount());
    await owner.press('3');
    await owner.waitFor(new RegExp(`› ?withdrawal ${viaDashboard}`));
    await owner.press('y');
    await owner.waitFor(/Two-factor code of .* to approve withdrawal/);
    for (const d of await f.ownerOtp.nextAsync()) await owner.press(d);
    await owner.press(KEY.enter);
    const ownRefusal = await runBin(COINKEEP_BIN, [
      '--config',
      cliConfigFile(f.td),
      'withdrawals',
      'approve',
      '--account',
      f.accountId,
      '--as',
      f.owner,
      '--otp',
      await f.ownerOtp.nextAsync(),
      viaDashboard,
    ]);
    const cliLine = ownRefusal.stderr.trim();
    t.regex(cliLine, /^coinkeep: .*\[forbidden\]/);
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    const shown = await owner.waitFor(/\[forbidden\]/);
    t.true(flat(shown).includes(flat(cliLine)), `the refusal reads as the CLI prints it:\n${shown}\n${cliLine}`);
    owner.unmount();

    const r = await renderDashboard(f.td.dataDir, { as: ADMIN });
    t.teardown(() => r.unmount());
    await r.press('3');
    await r.waitFor(new RegExp(`› ?withdrawal ${viaDashboard}`));
    await r.press('y');
    await r.waitFor(/Two-factor code of admin@dash\.test to approve/);
    for (const d of '000000') await r.press(d);
    await r.press(KEY.enter);
    t.regex(await r.waitFor(/two-factor code is not valid/), /coinkeep: the two-factor code is not valid \[forbidden\] field: otp/);
    t.is((await f.api.get(`/v1/withdrawals/${viaDashboard}`)).body.status, 'awaiting_approval');

    await r.press('y');
    await r.waitFor(/Two-factor code of admin@dash\.test/);
    for (const d of await adminOtp.next()) await r.press(d);
    await r.press(KEY.enter);
    await r.waitFor(new RegExp(`withdrawal ${viaDashboard}: pending`));
    t.is((await f.api.get(`/v1/withdrawals/${viaDashboard}`)).body.status, 'pending');

    const logged = async (id: string) => {
      const rows = await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'withdrawal.approved' });
      const row = rows.find((l) => JSON.parse(l.details).withdrawal_id === id)!;
      const { withdrawal_id: _id, ...details } = JSON.parse(row.details);
      return { actor: row.actor, action: row.action, details };
    };
    t.deepEqual(await logged(viaDashboard), await logged(viaCli));
    t.is((await logged(viaDashboard)).actor, ADMIN);
  },
);

test.serial('Approvals: c cancels a withdrawal after asking, with the member two-factor code, and the security log names them', async (t) => {
  const id = await withdraw();
  const r = await renderDashboard(f.td.dataDir, { as: ADMIN });
  t.teardown(() => r.unmount());
  await r.press('3');
  await r.waitFor(new RegExp(`› ?withdrawal ${id}`));
  await r.press('c');
  await r.waitFor(new RegExp(`Cancel withdrawal ${id.slice(-8)} \\(its money returns to available\\)\\? \\[y/N\\]`));
  await r.press('n');
  await r.waitFor(/cancelled; nothing changed/);
  t.is((await f.api.get(`/v1/withdrawals/${id}`)).body.status, 'awaiting_approval');

  await r.press('c');
  await r.waitFor(/Cancel withdrawal/);
  await r.press('y');
  await r.waitFor(/Two-factor code of admin@dash\.test to cancel withdrawal/);
  for (const d of await adminOtp.next()) await r.press(d);
  await r.press(KEY.enter);
  await r.waitFor(new RegExp(`withdrawal ${id}: cancelled`));
  t.is((await f.api.get(`/v1/withdrawals/${id}`)).body.status, 'cancelled');
  const logged = (await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'withdrawal.cancelled' })).map((e) => [
    e.actor,
    JSON.parse(e.details).withdrawal_id,
  ]);
  t.deepEqual(logged, [[ADMIN, id]]);
});

test.serial('Webhooks: ping an endpoint, then replay an exhausted delivery and every exhausted delivery of the endpoint with a key', async (t) => {
  const r = await renderDashboard(f.td.dataDir);
  t.teardown(() => r.unmount());
  await r.press('4');
  await r.waitFor(new RegExp(`› ?${endpointId.slice(-8)} enabled`));
  const before = sink.at('/hook').length;
  await r.press('p');
  await r.waitFor(/ping sent to endpoint/);
  await sink.waitFor('/hook', before + 1);

  const store = f.td.daemon.store;
  await until(
    async () => (await store.read.findBy(WebhookDeliveryEntity, { endpoint_id: endpointId, status: 'pending' })).length === 0,
    15_000,
    'deliveries settled',
  );
  const rows = await store.read.findBy(WebhookDeliveryEntity, { endpoint_id: endpointId });
  await store.write((em) =>
    em.update(WebhookDeliveryEntity, { endpoint_id: endpointId }, { status: 'exhausted', next_attempt_at: null, last_error: 'connect ECONNREFUSED' }),
  );
  const frame = await r.waitFor(/exhausted .*connect ECONNREFUSED/);
  t.regex(frame, /Failing and exhausted deliveries/);

  const sent = sink.at('/hook').length;
  await r.press(KEY.up, KEY.up, KEY.up);
  await r.press('r');
  await r.waitFor(/queued to be sent again/);
  await sink.waitFor('/hook', sent + 1);

  await until(
    async () => (await store.read.findBy(WebhookDeliveryEntity, { endpoint_id: endpointId, status: 'pending' })).length === 0,
    15_000,
    'the replay settled',
  );
  await store.write((em) => em.update(WebhookDeliveryEntity, { endpoint_id: endpointId }, { status: 'exhausted', next_attempt_at: null }));
  const again = sink.at('/hook').length;
  await r.waitFor(/exhausted/);
  await r.press('R');
  await r.waitFor(/Send every exhausted delivery of endpoint/);
  await r.press('y');
  await r.waitFor(new RegExp(`${rows.length} exhausted deliveries of endpoint ${endpointId.slice(-8)} queued`));
  await sink.waitFor('/hook', again + rows.length);
});

test.serial('Keys: disabling asks first; n changes nothing, y disables the key', async (t) => {
  const r = await renderDashboard(f.td.dataDir, { as: f.owner, account: f.accountId });
  t.teardown(() => r.unmount());
  await r.press('5');
  const first = (await f.td.daemon.keys.list(f.accountId))[0]!;
  await r.waitFor(new RegExp(`› ?${first.key_id} +active`));
  await r.press('d');
  await r.waitFor(new RegExp(`Disable key ${first.key_id}\\? \\[y/N\\]`));
  await r.press('n');
  await r.waitFor(/cancelled; nothing changed/);
  t.is((await f.td.daemon.store.read.findOneByOrFail(ApiKeyEntity, { key_id: first.key_id })).status, 'active');
  await r.press('d');
  await r.waitFor(/Disable key/);
  await r.press('y');
  await r.waitFor(new RegExp(`key ${first.key_id}: disabled`));
  await r.waitFor(new RegExp(`${first.key_id} +disabled`));
  t.is((await f.td.daemon.store.read.findOneByOrFail(ApiKeyEntity, { key_id: first.key_id })).status, 'disabled');
});
