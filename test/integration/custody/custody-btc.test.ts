/**
 * Cold storage on bcoin regtest (PRODUCT §18, issue 36 §2): above `keep`, an account's available
 * BTC is forwarded to its cold address as an ordinary withdrawal (comment "cold storage"), once,
 * however many runs race; `keep` is left available after the fees; the forward is paid on chain for
 * exactly its amount. Setting or changing the address is a security change: the address is used
 * only after the window, the old one not after the change. A frozen account forwards nothing; a
 * removed rule stops. The CLI's refusals change nothing. ledger verify and reconcile stay clean.
 */
import test from 'ava';
import { CustodyForwardEntity, CustodyRuleEntity } from '../../../src/db/entities/custody';
import { AccountEntity, SecurityLogEntity } from '../../../src/db/entities/team';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { Amount } from '../../../src/shared/amount';
import { adminRequest } from '../../helpers/admin-socket';
import { findTransaction, killAllBcoins, sats } from '../../helpers/bcoin';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile } from '../../helpers/daemon';
import { BTC, elsewhere, paid, reconcile, startPayoutFixture, type PayoutFixture, type PayoutMerchant } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

let f: PayoutFixture;
test.before(async () => {
  // The job's own schedule stays out of the way: the tests run it.
  f = await startPayoutFixture({ overrides: { custody: { interval_seconds: 86400 } } });
});
test.after.always(async () => {
  await f?.stop();
});

const DAY_AGO = () => new Date(Date.now() - 25 * 3600 * 1000).toISOString();
const service = () => f.td.daemon.custody.service;
const run = () => service().run();

/** The owner's code (OtpSource gives three a 30 s step: each test uses at most two beside the key's grant). */
const ownerActor = (m: PayoutMerchant) => ({ kind: 'member' as const, email: m.owner, otp: m.ownerOtp.next() });

/** An admin of the account added by the operator, whose codes wait for the clock when spent. */
async function adminOf(m: PayoutMerchant): Promise<{ email: string; otp: RealOtp }> {
  const email = `admin-${m.accountId.slice(0, 8)}@custody.test`;
  const { member } = await f.td.daemon.team.addMember(m.accountId, { kind: 'operator' }, email, 'admin');
  return { email, otp: new RealOtp(member.totp_secret) };
}

async function setRule(m: PayoutMerchant, address: string, keep: string) {
  return service().set(m.accountId, ownerActor(m), { coin_id: BTC, address, keep });
}

/** The window passed: the rule's address in use, and the account's security changes a day old. */
async function pastWindow(m: PayoutMerchant): Promise<void> {
  await f.td.daemon.store.write(async (em) => {
    await em.update(CustodyRuleEntity, { account_id: m.accountId }, { effective_at: DAY_AGO() });
    await em.update(SecurityLogEntity, { account_id: m.accountId }, { created_at: DAY_AGO() });
  });
}

/** The account's cold-storage withdrawals, oldest first. */
async function forwards(m: PayoutMerchant) {
  const rows = await f.td.daemon.store.read.find(WithdrawalEntity, {
    where: { account_id: m.accountId, comment: 'cold storage' },
    order: { created_at: 'ASC' },
  });
  return rows;
}

/** The account's BTC balance from the books (the API answers a frozen account 403). */
const booked = async (m: PayoutMerchant) => {
  const b = await f.td.daemon.money.accountBalance(f.td.daemon.store.read, m.accountId, BTC);
  return { available: b.available.toString(), hold: b.hold.toString() };
};

const ledgerClean = async (t: import('ava').ExecutionContext) => {
  t.true(await f.ledgerClean(), 'ledger verify');
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
};

test.serial(
  'deposits above keep are forwarded once, however many runs race; keep is left available after the fees; paid on chain for exactly the amount; the dashboard shows hot and cold',
  async (t) => {
    t.timeout(180_000);
    const m = await f.anotherMerchant();
    await m.fund('0.3', '0.2');
    const before = Amount.of((await m.balance()).available);
    const cold = elsewhere();
    const rule = await setRule(m, cold, '0.1');
    t.like(rule, { coin_id: BTC, ticker: 'BTC', address: cold, keep: '0.1', waiting: true, forwarded: '0', last_withdrawal_id: null });
    t.true(Date.parse(rule.effective_at) - Date.now() > 23.9 * 3600 * 1000, 'a new address waits out the security-change window');
    await run();
    t.is((await forwards(m)).length, 0, 'not before the window');

    await pastWindow(m);
    await Promise.all([run(), run(), run(), run(), run()]);
    await run();
    const made = await forwards(m);
    t.is(made.length, 1, 'one forward');
    const w = made[0]!;
    t.like(w, { to_address: cold, coin_id: BTC, comment: 'cold storage', payout_id: `cold-storage:${rule.id}:1`, network_fee_mode: 'reserved' });
    t.true(['pending', 'processing', 'broadcast'].includes(w.status), w.status);
    t.is(Amount.of(w.total_debit).toString(), Amount.of(w.amount).plus(Amount.of(w.platform_fee)).plus(Amount.of(w.network_fee_reserved)).toString());
    const held = await m.balance();
    t.is(Amount.of(held.available).toString(), before.minus(Amount.of(w.total_debit)).toString(), 'the whole debit is held');
    t.true(Amount.of(held.available).cmp(Amount.of('0.1')) >= 0, `keep left available after the fees: ${held.available}`);
    t.true(Amount.of(held.available).minus(Amount.of('0.1')).cmp(Amount.of('0.00000001')) <= 0, 'the excess is forwarded whole (to the satoshi)');
    const forwardRow = await f.td.daemon.store.read.findOneByOrFail(CustodyForwardEntity, { withdrawal_id: w.id });
    t.like(forwardRow, { rule_id: rule.id, seq: 1 });

    const done = await (async () => {
      await f.mineUntil(async () => (await m.get(w.id)).status === 'completed', 'the forward completed');
      return m.get(w.id);
    })();
    const tx = await findTransaction(f.node, done.txid);
    t.is(paid(f, tx, cold), sats(w.amount), 'the cold address received exactly the amount');
    await run();
    t.is((await forwards(m)).length, 1, 'nothing more once keep is all that is left');
    const after = await m.balance();
    t.true(Amount.of(after.available).cmp(Amount.of('0.1')) >= 0);
    t.is(after.hold, '0');

    const dash = await adminRequest(f.td.daemon.config.data_dir, 'GET', `/admin/dashboard?screen=overview&account=${m.accountId}`);
    t.is(dash.status, 200);
    t.deepEqual(
      dash.body.overview.balances.map((b: any) => [b.coin_id, b.available, b.cold]),
      [[BTC, after.available, w.amount]],
      'hot: available; cold: what the completed forwards sent',
    );
    const [listed] = await service().list(m.accountId, { kind: 'member', email: m.owner });
    t.like(listed, { forwarded: w.amount, last_withdrawal_id: w.id, waiting: false });
    await ledgerClean(t);
  },
);

test.serial(
  'a change of address is a security change: the forward still in review to the old address is cancelled, nothing goes anywhere inside the window, a plain payout meanwhile goes to review, and after the window the new address is paid',
  async (t) => {
    t.timeout(180_000);
    const m = await f.anotherMerchant();
    await m.fund('0.3');
    const oldCold = elsewhere();
    const newCold = elsewhere();
    await setRule(m, oldCold, '0.1');
    await pastWindow(m);
    // A daily limit under the forward's worth: it waits in review (the usual rules).
    await f.td.daemon.store.write((em) => em.update(AccountEntity, { id: m.accountId }, { daily_withdrawal_limit: '100' }));
    f.td.daemon.team.changedOutside();
    await run();
    const [first] = await forwards(m);
    t.like(first, { status: 'review', review_reason: 'limit', to_address: oldCold });
    const balanceInReview = await m.balance();

    const changed = await setRule(m, newCold, '0.1');
    t.like(changed, { address: newCold, waiting: true });
    t.is((await m.get(first!.id)).status, 'cancelled', 'the old address is not used after the change');
    t.deepEqual(await m.balance(), { available: Amount.of(balanceInReview.available).plus(Amount.of(first!.total_debit)).toString(), hold: '0' });
    const log = await f.td.daemon.store.read.find(SecurityLogEntity, {
      where: { account_id: m.accountId, action: 'custody.address_set' },
      order: { created_at: 'ASC' },
    });
    t.is(log.length, 2);
    t.like(JSON.parse(log[1]!.details), { address: newCold, address_was: oldCold, keep: '0.1' });
    t.is(log[1]!.actor, m.owner);

    await run();
    await run();
    t.is((await forwards(m)).length, 1, 'the new address is not used before the window');
    const plain = await m.withdraw({ coin_id: BTC, amount: '0.001', to_address: elsewhere() });
    t.like(plain, { status: 'review', review_reason: 'pattern' }, 'a cold address changed is a security change like a whitelist change');
    t.is((await m.api.post(`/v1/withdrawals/${plain.id}/cancel`, {})).status, 200);

    await pastWindow(m);
    await f.td.daemon.store.write((em) => em.update(AccountEntity, { id: m.accountId }, { daily_withdrawal_limit: null }));
    f.td.daemon.team.changedOutside();
    await run();
    const all = await forwards(m);
    t.is(all.length, 2);
    const second = all[1]!;
    t.like(second, { to_address: newCold, payout_id: `cold-storage:${changed.id}:2` });
    await f.mineUntil(async () => (await m.get(second.id)).status === 'completed', 'the forward to the new address completed');
    const tx = await findTransaction(f.node, (await m.get(second.id)).txid);
    t.is(paid(f, tx, newCold), sats(second.amount));
    t.is(paid(f, tx, oldCold), 0n);
    t.is((await m.get(first!.id)).txid, null, 'the cancelled forward was never sent');
    await ledgerClean(t);
  },
);

test.serial('a frozen account forwards nothing; unfrozen, it does', async (t) => {
  t.timeout(180_000);
  const m = await f.anotherMerchant();
  await m.fund('0.2');
  await setRule(m, elsewhere(), '0.05');
  await pastWindow(m);
  await f.td.daemon.team.freeze(m.accountId, { kind: 'member', email: m.owner });
  const before = await booked(m);
  await Promise.all([run(), run()]);
  t.is((await forwards(m)).length, 0);
  t.deepEqual(await booked(m), before, 'nothing held');
  await f.td.daemon.team.unfreeze(m.accountId);
  await run();
  t.is((await forwards(m)).length, 1);
});

test.serial('a removed rule stops: nothing is forwarded after, a forward still cancellable is cancelled, and the removal is in the security log', async (t) => {
  t.timeout(180_000);
  const m = await f.anotherMerchant();
  await m.fund('0.2');
  const cold = elsewhere();
  await setRule(m, cold, '0.05');
  await pastWindow(m);
  await f.td.daemon.store.write((em) => em.update(AccountEntity, { id: m.accountId }, { daily_withdrawal_limit: '100' }));
  f.td.daemon.team.changedOutside();
  await run();
  const [inReview] = await forwards(m);
  t.is(inReview!.status, 'review');
  const admin = await adminOf(m);
  const removed = await service().remove(m.accountId, ownerActor(m), { coin_id: BTC });
  t.like(removed, { coin_id: BTC, removed: true });
  t.is((await m.get(inReview!.id)).status, 'cancelled');
  await f.td.daemon.store.write((em) => em.update(AccountEntity, { id: m.accountId }, { daily_withdrawal_limit: null }));
  f.td.daemon.team.changedOutside();
  await run();
  await run();
  t.is((await forwards(m)).length, 1, 'nothing after the removal');
  t.deepEqual(await service().list(m.accountId, { kind: 'member', email: m.owner }), []);
  const log = await f.td.daemon.store.read.findOneByOrFail(SecurityLogEntity, { account_id: m.accountId, action: 'custody.removed' });
  t.like(JSON.parse(log.details), { coin_id: BTC, address: cold });
  const again = await service()
    .remove(m.accountId, { kind: 'member', email: admin.email, otp: await admin.otp.next() }, { coin_id: BTC })
    .catch((e) => e);
  t.is(again.code, 'not_found');
});

test.serial(
  'the CLI sets, lists and removes; refusals (a bad address, a bad keep, an unknown coin, a developer, a wrong code) answer status, code and details and change nothing',
  async (t) => {
    t.timeout(180_000);
    const m = await f.anotherMerchant();
    const DEV = `dev-${m.accountId.slice(0, 8)}@custody.test`;
    await f.td.daemon.team.addMember(m.accountId, { kind: 'operator' }, DEV, 'developer');
    const admin = await adminOf(m);
    const dataDir = f.td.daemon.config.data_dir;
    const cli = (args: string[]) => runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', ...args], { timeoutMs: 60_000 });
    const cold = elsewhere();
    const snapshot = async () => ({
      rules: await f.td.daemon.store.read.find(CustodyRuleEntity, { where: { account_id: m.accountId } }),
      log: await f.td.daemon.store.read.count(SecurityLogEntity, { where: { account_id: m.accountId } }),
    });
    const before = await snapshot();
    const refusal = async (body: Record<string, unknown>, status: number, code: string, details: Record<string, unknown>) => {
      const r = await adminRequest(dataDir, 'POST', `/admin/accounts/${m.accountId}/custody`, {
        as: m.owner,
        coin_id: BTC,
        address: cold,
        keep: '0.1',
        ...body,
      });
      t.is(r.status, status, JSON.stringify(r.body));
      t.is(r.body.error.code, code);
      if (Object.keys(details).length === 0) t.deepEqual(r.body.error.details, {});
      else t.deepEqual(r.body.error.details, details);
    };
    await refusal({ address: 'bc1qnotregtest', otp: '123456' }, 422, 'address_refused', {});
    await refusal({ address: '0x52908400098527886E0F7030069857D2E4169EE7', otp: '123456' }, 422, 'address_refused', {});
    await refusal({ keep: '0.123456789', otp: '123456' }, 400, 'validation_error', { field: 'keep' });
    await refusal({ keep: '-1', otp: '123456' }, 400, 'validation_error', { field: 'keep' });
    await refusal({ keep: 1, otp: '123456' }, 400, 'validation_error', { field: 'keep' });
    await refusal({ coin_id: '00000000-0000-4000-8000-000000000000', otp: '123456' }, 400, 'validation_error', { field: 'coin_id' });
    await refusal({ as: DEV, otp: '123456' }, 403, 'forbidden', { required: ['owner', 'admin'] });
    await refusal({ otp: '000000' }, 403, 'forbidden', { field: 'otp' });
    await refusal({ as: 'stranger@elsewhere.test', otp: '123456' }, 403, 'forbidden', {});
    t.deepEqual(await snapshot(), before, 'nothing changed');

    // Through the CLI: the same refusal as the user sees it, then the path that works.
    const bad = await cli(['custody', 'set', '--account', m.accountId, '--as', m.owner, '--otp', '000000', '--coin', BTC, '--address', cold, '--keep', '0.1']);
    t.is(bad.code, 1);
    t.like(JSON.parse(bad.stderr).error, { code: 'forbidden', details: { field: 'otp' } });
    const set = await cli([
      'custody',
      'set',
      '--account',
      m.accountId,
      '--as',
      admin.email,
      '--otp',
      await admin.otp.next(),
      '--coin',
      BTC,
      '--address',
      cold,
      '--keep',
      '0.1',
    ]);
    t.is(set.code, 0, set.stderr);
    t.like(set.json, { coin_id: BTC, address: cold, keep: '0.1', waiting: true, address_set_by: admin.email });
    const keepOnly = await cli([
      'custody',
      'set',
      '--account',
      m.accountId,
      '--as',
      admin.email,
      '--otp',
      await admin.otp.next(),
      '--coin',
      BTC,
      '--address',
      cold,
      '--keep',
      '0.25',
    ]);
    t.is(keepOnly.code, 0, keepOnly.stderr);
    t.like(keepOnly.json, { keep: '0.25', effective_at: set.json.effective_at }, 'a changed keep alone is no new address: the window does not start again');
    const list = await cli(['custody', 'list', '--account', m.accountId, '--as', DEV]);
    t.is(list.code, 0, list.stderr);
    t.deepEqual(
      list.json.items.map((r: any) => [r.coin_id, r.address, r.keep, r.waiting]),
      [[BTC, cold, '0.25', true]],
    );
    const text = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), 'custody', 'list', '--account', m.accountId, '--as', DEV]);
    t.regex(text.stdout, new RegExp(`BTC  keep 0\\.25 -> ${cold}  waiting until `));
    const actions = (await f.td.daemon.store.read.find(SecurityLogEntity, { where: { account_id: m.accountId }, order: { created_at: 'ASC' } }))
      .map((e) => e.action)
      .filter((a) => a.startsWith('custody.'));
    t.deepEqual(actions, ['custody.address_set', 'custody.keep_changed']);
    const devRemove = await adminRequest(dataDir, 'POST', `/admin/accounts/${m.accountId}/custody/remove`, { as: DEV, otp: '123456', coin_id: BTC });
    t.is(devRemove.status, 403);
    const removed = await cli(['custody', 'remove', '--account', m.accountId, '--as', admin.email, '--otp', await admin.otp.next(), '--coin', BTC]);
    t.is(removed.code, 0, removed.stderr);
    t.like(removed.json, { coin_id: BTC, removed: true });
    const empty = await cli(['custody', 'list', '--account', m.accountId, '--as', m.owner]);
    t.deepEqual(empty.json.items, []);
  },
);

test.serial(
  'above the dual-approval threshold a forward awaits approval like any withdrawal: the member who set its address cannot approve it, another admin can, and it is paid',
  async (t) => {
    t.timeout(180_000);
    const m = await f.anotherMerchant();
    await m.fund('0.2');
    const cold = elsewhere();
    await setRule(m, cold, '0.05');
    await pastWindow(m);
    const admin = await adminOf(m);
    // The admin was added a day ago (their approval counts), and the threshold is under the forward's worth.
    await f.td.daemon.store.write(async (em) => {
      await em.update(SecurityLogEntity, { account_id: m.accountId }, { created_at: DAY_AGO() });
      await em.update(AccountEntity, { id: m.accountId }, { dual_approval_threshold: '100' });
    });
    f.td.daemon.team.changedOutside();
    await run();
    const [w] = await forwards(m);
    t.like(w, { status: 'awaiting_approval', to_address: cold });
    const withdrawals = f.td.daemon.withdrawals.service;
    const own = await withdrawals.decide(m.accountId, w!.id, ownerActor(m), 'approve').catch((e) => e);
    t.is(own.status, 403);
    t.deepEqual([own.code, own.details], ['forbidden', { reason: 'approver_made_change' }]);
    t.is((await m.get(w!.id)).status, 'awaiting_approval', 'nothing changed');
    await run();
    t.is((await forwards(m)).length, 1, 'one forward at a time');
    const approved = await withdrawals.decide(m.accountId, w!.id, { kind: 'member', email: admin.email, otp: await admin.otp.next() }, 'approve');
    t.is(approved.status, 'pending');
    await f.mineUntil(async () => (await m.get(w!.id)).status === 'completed', 'the approved forward completed');
    const tx = await findTransaction(f.node, (await m.get(w!.id)).txid);
    t.is(paid(f, tx, cold), sats(w!.amount));
    await ledgerClean(t);
  },
);
