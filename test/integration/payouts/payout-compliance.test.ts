/**
 * PRODUCT §14 (issue 29 §2): freeze, KYB and the whitelist stop money at the payout worker, not
 * only at the API. The worker re-checks the account in the transaction that claims: a frozen
 * account's withdrawals wait in `pending` (and do not hold up other accounts'); an unverified
 * account's, or one whose destination is off the enforced whitelist, go to `review` with
 * `review_reason: compliance`, their holds kept. On bcoin regtest, as a merchant and the CLI see it.
 */
import test, { type ExecutionContext } from 'ava';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import type { FeeQuote } from '../../../src/chains/types';
import type { ChainConfig } from '../../../src/config/schema';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { TransactionEntity } from '../../../src/db/entities/money';
import { placeholder, rawQuery } from '../../../src/db/raw';
import { CLAIM_READ_PER_ACCOUNT } from '../../../src/payouts/payout-worker';
import { Amount } from '../../../src/shared/amount';
import { killAllBcoins } from '../../helpers/bcoin';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { RealOtp } from '../../helpers/cli-otp';
import { cliConfigFile, OPEN_SENSITIVE_LIMITS } from '../../helpers/daemon';
import { BTC, CONFIRMATIONS, elsewhere, startPayoutFixture, statuses, until, type PayoutFixture } from '../../helpers/payout-fixture';
import { eventTypes } from '../../helpers/withdrawal-picture';

test.after.always(killAllBcoins);

/** The batch window keeps new withdrawals waiting until the test makes them due (backdatePending). */
const start = async (t: ExecutionContext) => {
  const f = await startPayoutFixture({ payouts: { batch_window_seconds: 600 } });
  t.teardown(() => f.stop());
  return f;
};

const cli = (f: PayoutFixture, args: string[]) => runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', ...args], { timeoutMs: 60_000 });

/** How many payouts (signed transactions) the daemon made for an account. */
async function payoutsOf(f: PayoutFixture, accountId: string): Promise<number> {
  const em = f.td.daemon.store.read;
  const [row] = await rawQuery<{ n: number | string }>(em, `SELECT COUNT(*) AS n FROM chain_payouts WHERE account_id = ${placeholder(em, 1)}`, [accountId]);
  return Number(row!.n);
}

/** The compliance holds the worker wrote to the account's security log: actor, withdrawal and reason, in the withdrawals' order. */
async function complianceLog(f: PayoutFixture): Promise<Array<[string, string, string]>> {
  const rows = await f.td.daemon.store.read.findBy(SecurityLogEntity, { account_id: f.accountId, action: 'withdrawal.compliance_review' });
  return rows
    .map((e): [string, string, string] => [e.actor, JSON.parse(e.details).withdrawal_id, JSON.parse(e.details).reason])
    .sort((a, b) => a[1].localeCompare(b[1]));
}

const sum = (...amounts: string[]): string => amounts.reduce((s, a) => s.plus(Amount.of(a)), Amount.zero()).toString();
const minus = (a: string, ...b: string[]): string => b.reduce((x, y) => x.minus(Amount.of(y)), Amount.of(a)).toString();

test('withdrawals made before a freeze stay pending however often the worker runs (no payout, nothing sent) while another account is paid; a member cancels one through the CLI while frozen; unfrozen, the other is paid', async (t) => {
  const f = await start(t);
  const other = await f.anotherMerchant();
  await f.fund('0.3');
  await other.fund('0.2');
  const before = await f.balance();
  const cancelled = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  const kept = await f.withdraw({ coin_id: BTC, amount: '0.05', to_address: elsewhere() });
  const elsewhereOne = await other.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  const frozen = await cli(f, ['account', 'freeze', '--account', f.accountId, '--as', f.owner]);
  t.is(frozen.code, 0, frozen.stderr);
  await f.backdatePending(601);
  await other.backdatePending(601);

  const worker = f.td.daemon.withdrawals.payoutJobs[0]!;
  for (let run = 0; run < 3; run++) await worker.run(new AbortController().signal);
  await other.waitWithdrawal(elsewhereOne.id, (x) => x.status === 'broadcast', 'the other account paid');
  await f.node.mine(CONFIRMATIONS);
  await other.waitWithdrawal(elsewhereOne.id, (x) => x.status === 'completed', 'the other account completed');
  t.deepEqual(await statuses(f), { [cancelled.id]: 'pending', [kept.id]: 'pending' });
  t.is(await payoutsOf(f, f.accountId), 0, 'nothing signed, so nothing sent');
  t.is(await payoutsOf(f, other.accountId), 1);

  // The API refuses the frozen account's keys (SPEC); the CLI cancels for any member.
  const byKey = await f.api.post(`/v1/withdrawals/${cancelled.id}/cancel`);
  t.is(byKey.status, 403);
  t.is(byKey.body.error.code, 'account_frozen');
  t.deepEqual(byKey.body.error.details, {});
  t.is((await statuses(f))[cancelled.id], 'pending');
  const byMember = await cli(f, ['withdrawals', 'cancel', '--account', f.accountId, '--as', f.owner, '--otp', f.ownerOtp.next(), cancelled.id]);
  t.is(byMember.code, 0, byMember.stderr);
  t.like(byMember.json, { id: cancelled.id, status: 'cancelled' });
  t.deepEqual(await eventTypes(f, cancelled.id), ['withdrawal.cancelled']);
  t.is(
    (await f.td.daemon.store.read.findOneByOrFail(TransactionEntity, { withdrawal_id: cancelled.id, type: 'withdrawal' })).status,
    'reverted',
    'its hold released',
  );
  t.true(await f.ledgerClean());

  const unfrozen = await cli(f, ['account', 'unfreeze', '--account', f.accountId]);
  t.is(unfrozen.code, 0, unfrozen.stderr);
  await f.waitWithdrawal(kept.id, (x) => x.status === 'broadcast', 'paid once unfrozen');
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(kept.id, (x) => x.status === 'completed', 'completed');
  t.deepEqual(await f.balance(), { available: minus(before.available, kept.total_debit), hold: '0' });
  t.true(await f.ledgerClean());
});

/** The node, with a hook run once at the next fee quote: the worker asks one after its read of the due withdrawals and before its claim. */
class QuoteHook extends BtcAdapter {
  atNextQuote: (() => Promise<unknown>) | null = null;
  constructor(chain: ChainConfig) {
    super(chain);
  }
  override async feeQuote(signal?: AbortSignal): Promise<FeeQuote> {
    const hook = this.atNextQuote;
    this.atNextQuote = null;
    await hook?.();
    return super.feeQuote(signal);
  }
}

test('a freeze that lands between the worker read and its claim still stops the payout: the claim re-checks the account', async (t) => {
  let node!: QuoteHook;
  const f = await startPayoutFixture({ payouts: { batch_window_seconds: 600 }, adapter: (chain) => (node = new QuoteHook(chain)) });
  t.teardown(() => f.stop());
  await f.fund('0.3');
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  let frozen = false;
  node.atNextQuote = async () => {
    await f.td.daemon.team.freeze(f.accountId, { kind: 'member', email: f.owner });
    frozen = true;
  };
  await f.backdatePending(601);

  const worker = f.td.daemon.withdrawals.payoutJobs[0]!;
  await until(async () => {
    await worker.run(new AbortController().signal);
    return frozen;
  }, 'the freeze between read and claim');
  await worker.run(new AbortController().signal);
  t.deepEqual(await statuses(f), { [w.id]: 'pending' });
  t.is(await payoutsOf(f, f.accountId), 0);
});

test('a frozen account with more pending withdrawals than one claim reads does not hold up another account payout', async (t) => {
  const f = await startPayoutFixture({ payouts: { batch_window_seconds: 600 }, daemon: { sensitiveLimits: OPEN_SENSITIVE_LIMITS } });
  t.teardown(() => f.stop());
  const other = await f.anotherMerchant();
  await f.fund('1');
  await other.fund('0.2');
  const to = elsewhere();
  for (let made = 0; made < CLAIM_READ_PER_ACCOUNT; made += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => f.withdraw({ coin_id: BTC, amount: '0.0001', to_address: to, payout_id: `many-${made + i}` })));
  }
  const frozen = await cli(f, ['account', 'freeze', '--account', f.accountId, '--as', f.owner]);
  t.is(frozen.code, 0, frozen.stderr);
  await f.backdatePending(700);
  const w = await other.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  await other.backdatePending(601);

  await other.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'the other account paid');
  t.is(await payoutsOf(f, f.accountId), 0);
  t.is(Object.values(await statuses(f)).filter((s) => s === 'pending').length, CLAIM_READ_PER_ACCOUNT);
});

test('the operator un-verifies an account with a pending withdrawal: the worker sends it to review (compliance) with its hold, pays nothing; approved while unverified it returns to review; verified and approved it is paid', async (t) => {
  const f = await start(t);
  await f.fund('0.3');
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  const revoked = await cli(f, ['account', 'verify', '--account', f.accountId, '--revoke']);
  t.is(revoked.code, 0, revoked.stderr);
  // Made a day ago: the 24 hours of its review start when it enters review, not at its creation.
  await f.backdatePending(25 * 3600);

  const held = await f.waitWithdrawal(w.id, (x) => x.status === 'review', 'held for compliance');
  t.like(held, { review_reason: 'compliance', txid: null });
  t.deepEqual(await eventTypes(f, w.id), ['withdrawal.review']);
  t.is(await payoutsOf(f, f.accountId), 0);
  t.like(await f.balance(), { hold: w.total_debit });
  t.deepEqual(await complianceLog(f), [['system', w.id, 'unverified']]);
  t.is(await f.td.daemon.withdrawals.service.expireReviews(), 0);
  t.is((await f.get(w.id)).status, 'review');

  const admin = new RealOtp((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@shop.test', 'admin')).member.totp_secret);
  const approved = await cli(f, ['withdrawals', 'approve', '--account', f.accountId, '--as', 'admin@shop.test', '--otp', await admin.next(), w.id]);
  t.is(approved.code, 0, approved.stderr);
  await until(async () => (await eventTypes(f, w.id)).length === 2, 'back in review');
  t.like(await f.get(w.id), { status: 'review', review_reason: 'compliance' });
  t.is(await payoutsOf(f, f.accountId), 0);

  const verified = await cli(f, ['account', 'verify', '--account', f.accountId]);
  t.is(verified.code, 0, verified.stderr);
  const again = await cli(f, ['withdrawals', 'approve', '--account', f.accountId, '--as', 'admin@shop.test', '--otp', await admin.next(), w.id]);
  t.is(again.code, 0, again.stderr);
  await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'paid once verified');
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.deepEqual(await eventTypes(f, w.id), ['withdrawal.review', 'withdrawal.review', 'withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.completed']);
  t.true(await f.ledgerClean());
});

test('while the whitelist is enforced the worker pays only whitelisted destinations: an address removed, or absent when enforcement was turned on, sends its withdrawal to review (compliance)', async (t) => {
  const f = await start(t);
  await f.fund('0.3');
  const admin = new RealOtp((await f.td.daemon.team.addMember(f.accountId, { kind: 'operator' }, 'admin@shop.test', 'admin')).member.totp_secret);
  const as = async () => ({ kind: 'member' as const, email: 'admin@shop.test', otp: await admin.next() });
  const { whitelist } = f.td.daemon.withdrawals;
  const [listed, delisted, never] = [elsewhere(), elsewhere(), elsewhere()];
  await whitelist.add(f.accountId, await as(), { coin_id: BTC, address: listed });
  const entry = await whitelist.add(f.accountId, await as(), { coin_id: BTC, address: delisted });
  // A day on: the member and whitelist changes no longer send new payouts to review (pattern).
  await f.td.daemon.store.write((em) =>
    em.update(SecurityLogEntity, { account_id: f.accountId }, { created_at: new Date(Date.now() - 25 * 3600 * 1000).toISOString() }),
  );
  const paid = await f.withdraw({ coin_id: BTC, amount: '0.05', to_address: listed });
  const removed = await f.withdraw({ coin_id: BTC, amount: '0.06', to_address: delisted });
  const absent = await f.withdraw({ coin_id: BTC, amount: '0.07', to_address: never });
  t.deepEqual([paid.status, removed.status, absent.status], ['pending', 'pending', 'pending']);

  await whitelist.remove(f.accountId, await as(), entry.id);
  const enforced = await cli(f, [
    'account',
    'set',
    '--account',
    f.accountId,
    '--as',
    'admin@shop.test',
    '--otp',
    await admin.next(),
    'withdrawal_whitelist_enforced=true',
  ]);
  t.is(enforced.code, 0, enforced.stderr);
  await f.backdatePending(601);

  await f.waitWithdrawal(paid.id, (x) => x.status === 'broadcast', 'the whitelisted one paid');
  for (const w of [removed, absent]) {
    t.like(await f.waitWithdrawal(w.id, (x) => x.status === 'review', 'held for compliance'), { review_reason: 'compliance', txid: null });
    t.deepEqual(await eventTypes(f, w.id), ['withdrawal.review']);
  }
  t.deepEqual(await complianceLog(f), [
    ['system', removed.id, 'not_whitelisted'],
    ['system', absent.id, 'not_whitelisted'],
  ]);
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(paid.id, (x) => x.status === 'completed', 'completed');
  t.is(await payoutsOf(f, f.accountId), 1, 'one payout, of the whitelisted withdrawal alone');
  t.like(await f.balance(), { hold: sum(removed.total_debit, absent.total_debit) });
  t.true(await f.ledgerClean());
});
