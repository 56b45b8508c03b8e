/**
 * PRODUCT §14 on bcoin started without a transaction index (Bitcoin Core's default), the daemon
 * reaching it through a proxy that answers as real nodes do: a payout fails only on proof. A
 * changeless payout whose payee spends its output at once completes once; a node that hides a
 * payout from every lookup does not fail it; a payout a node falsely refused is reopened when it is
 * mined; one the node answered and dropped is named stuck and ended by `coinkeep payouts cancel`,
 * whose confirmed cancel is the proof that fails its withdrawal.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { address as baddress } from 'bitcoinjs-lib';
import { btcNetwork } from '../../../src/chains/btc/derive';
import { rawQuery } from '../../../src/db/raw';
import { CANCELLED_BY_OPERATOR, REFUSED_BY_NODE } from '../../../src/payouts/payout-worker';
import { P2WPKH_INPUT_VSIZE, P2WPKH_SCRIPT_LENGTH, TX_OVERHEAD_VSIZE, outputVsize } from '../../../src/chains/btc/tx-size';
import { Amount } from '../../../src/shared/amount';
import { findTransaction, killAllBcoins, sats } from '../../helpers/bcoin';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile } from '../../helpers/daemon';
import { BTC, CONFIRMATIONS, elsewhere, events, minus, reconcile, startPayoutFixture, until, type PayoutFixture } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

/** The regtest fee rate the daemon pays: bcoin has no estimate, so the chain's fallback. */
const FALLBACK_SAT_VB = 10;

async function cli(f: PayoutFixture, ...args: string[]) {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', ...args], { timeoutMs: 60_000 });
  return { code: r.code, json: r.code === 0 ? JSON.parse(r.stdout) : JSON.parse(r.stderr || '{}'), stderr: r.stderr };
}

async function securityActions(f: PayoutFixture): Promise<string[]> {
  const rows = await rawQuery<{ action: string }>(
    f.td.daemon.store.read,
    `SELECT action FROM security_log WHERE account_id = '${f.accountId}' ORDER BY created_at, id`,
  );
  return rows.map((r) => r.action);
}

async function payoutOf(
  f: PayoutFixture,
  withdrawalId: string,
): Promise<{ id: string; status: string; failure_reason: string | null; reopened_at: string | null }> {
  const [row] = await rawQuery<{ id: string; status: string; failure_reason: string | null; reopened_at: string | null }>(
    f.td.daemon.store.read,
    `SELECT c.id, c.status, c.failure_reason, c.reopened_at FROM chain_payouts c JOIN chain_payout_legs l ON l.payout_id = c.id WHERE l.withdrawal_id = '${withdrawalId}'`,
  );
  return row!;
}

test('a changeless payout whose payee spends the output before our confirmations (CPFP) is completed once, on a node without a transaction index', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  await f.fund('0.2', '0.05');
  const before = await f.balance();
  // Just under the 0.2 coin less the fee of one input and one output: no change is worth making.
  const fee = BigInt(Math.ceil((TX_OVERHEAD_VSIZE + P2WPKH_INPUT_VSIZE + outputVsize(P2WPKH_SCRIPT_LENGTH)) * FALLBACK_SAT_VB));
  const amount = Amount.fromBaseUnits(sats('0.2') - fee - 50n, 8).toString();
  const w = await f.withdraw({ coin_id: BTC, amount, to_address: f.node.payer.address });
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  await until(async () => (await f.node.mempool()).includes(sent.txid), 'the payout in the mempool');
  const payout = await findTransaction(f.node, sent.txid);
  t.is(payout.outs.length, 1, 'changeless: one output, the payment');

  // The payee spends it at once, child pays for parent; both are mined together.
  const spend = f.node.payer.sign(
    [{ txid: sent.txid, vout: 0, value: BigInt(payout.outs[0]!.value) }],
    [{ address: elsewhere(), value: BigInt(payout.outs[0]!.value) - 5_000n }],
  );
  await f.node.rpc.call('sendrawtransaction', [spend.toHex()]);
  await until(async () => (await f.node.mempool()).includes(spend.getId()), 'the payee spend in the mempool');
  await f.node.mine(1);
  // Mined once, its output spent: lookups by txid say nothing of it now; the worker goes on running.
  await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast' && x.confirmations === 1, 'one confirmation');
  for (let i = 0; i < 4; i++) await new Promise((r) => setTimeout(r, 150));
  t.is((await f.get(w.id)).status, 'broadcast', 'never failed while waiting for confirmations');
  await f.node.mine(CONFIRMATIONS);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.is(done.txid, sent.txid);
  t.deepEqual(await f.balance(), { available: minus(before.available, w.total_debit), hold: '0' });
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.completed']);
  t.true(await f.ledgerClean());
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
});

test('a node that hides a payout from every lookup (not in its mempool list, not found by txid) never fails it: it is broadcast again each run, and completes once mined', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  await f.fund('0.3');
  const before = await f.balance();
  f.proxy.hideNext();
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  const sent = await f.waitWithdrawal(w.id, (x) => x.txid !== null, 'a txid');
  // Many runs over several seconds (the old rule failed it after three "unknown" answers in 3 s).
  const started = Date.now();
  await until(() => f.proxy.broadcasts.filter((x) => x === sent.txid).length >= 6 && Date.now() - started > 5000, 'broadcast again and again', 60_000);
  t.is((await f.get(w.id)).status, 'broadcast');
  t.deepEqual(await f.balance(), { available: minus(before.available, w.total_debit), hold: w.total_debit });
  await f.node.mine(CONFIRMATIONS);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.is(done.txid, sent.txid);
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.completed']);
  t.true(await f.ledgerClean());
});

test("a payout failed on a node's refusal and then mined after all is reopened: completed, its total_debit charged again, named in the security log and coinkeep status", async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  await f.fund('0.3');
  const before = await f.balance();
  // A node that says it refuses the transaction, and relays it all the same.
  f.proxy.refuse(() => ({ code: -26, message: 'scriptpubkey' }), { lie: true });
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: elsewhere() });
  const failed = await f.waitWithdrawal(w.id, (x) => x.status === 'failed', 'failed');
  t.is(failed.failure_reason, REFUSED_BY_NODE);
  t.deepEqual(await f.balance(), before, 'the hold released');
  f.proxy.refuse(null);
  const [txid] = await f.node.mempool();
  t.truthy(txid, 'the node has it all the same');

  await f.node.mine(CONFIRMATIONS);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed again');
  t.is(done.txid, txid);
  t.is(done.failure_reason, null);
  t.deepEqual(await f.balance(), { available: minus(before.available, w.total_debit), hold: '0' }, 'charged again');
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.failed', 'withdrawal.completed']);
  t.like(await payoutOf(f, w.id), { status: 'confirmed' });
  t.truthy((await payoutOf(f, w.id)).reopened_at);
  t.true((await securityActions(f)).includes('payout_reopened'));
  const status = await cli(f, 'status');
  t.like(status.json.payout_alerts?.[0], { kind: 'reopened', txid, withdrawal_ids: [w.id] });
  t.true(await f.ledgerClean());
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
});

test('a payout the node answers and drops stays broadcast, is named stuck in coinkeep status, and coinkeep payouts cancel ends it: its coins come back, the withdrawal fails once the cancel is confirmed', async (t) => {
  const f = await startPayoutFixture({ payouts: { stuck_alert_minutes: 0 } });
  t.teardown(() => f.stop());
  await f.fund('0.3');
  const before = await f.balance();
  f.proxy.dropNext();
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  // One block: under replace_after_blocks (3), so no replacement reaches the node either.
  await f.node.mine(1);
  t.is((await f.get(w.id)).status, 'broadcast', 'unknown to the node, never failed');
  const { id: payoutId } = await payoutOf(f, w.id);
  let status: Awaited<ReturnType<typeof cli>> | undefined;
  await until(async () => (status = await cli(f, 'status')).json.payout_alerts?.length > 0, 'named in coinkeep status');
  t.like(status!.json.payout_alerts[0], { kind: 'stuck', payout_id: payoutId, txid: sent.txid, withdrawal_ids: [w.id] });

  // Refusals, nothing changed: another account's member, a bad code, no code.
  const stranger = `stranger-${randomBytes(3).toString('hex')}@example.com`;
  const notMember = await cli(f, 'payouts', 'cancel', payoutId, '--as', stranger, '--otp', '000000');
  t.not(notMember.code, 0);
  t.is(notMember.json.error.code, 'forbidden');
  const badCode = await cli(f, 'payouts', 'cancel', payoutId, '--as', f.owner, '--otp', '000000');
  t.is(badCode.json.error.code, 'forbidden');
  t.is(badCode.json.error.details.field, 'otp');
  const unknown = await cli(f, 'payouts', 'cancel', '0190c8a4-0000-7000-8000-000000000000', '--as', f.owner, '--otp', '000000');
  t.is(unknown.json.error.code, 'not_found');
  t.is((await payoutOf(f, w.id)).status, 'broadcast');
  t.is((await rawQuery(f.td.daemon.store.read, `SELECT 1 FROM chain_payouts WHERE cancel_requested_at IS NOT NULL`)).length, 0);

  const asked = await cli(f, 'payouts', 'cancel', payoutId, '--as', f.owner, '--otp', f.ownerOtp.next());
  t.is(asked.code, 0, asked.stderr);
  t.like(asked.json.payout, { payout_id: payoutId, withdrawal_ids: [w.id] });
  const again = await cli(f, 'payouts', 'cancel', payoutId, '--as', f.owner, '--otp', f.ownerOtp.next());
  t.is(again.json.error.code, 'conflict');
  t.is(again.json.error.details.reason, 'cancel_requested');

  await until(async () => (await f.node.mempool()).length === 1, 'the cancel in the mempool');
  const [cancel] = await f.node.mempool();
  t.not(cancel, sent.txid);
  const tx = await findTransaction(f.node, cancel!);
  t.is(tx.outs.length, 1, 'one output: back to the wallet');
  const back = baddress.fromOutputScript(tx.outs[0]!.script, btcNetwork(f.td.daemon.config.chains[0]!));
  const [row] = await rawQuery<{ purpose: string; account_id: string }>(
    f.td.daemon.store.read,
    `SELECT purpose, account_id FROM addresses WHERE address = '${back}'`,
  );
  t.deepEqual({ ...row }, { purpose: 'change', account_id: f.accountId });
  t.like(await f.get(w.id), { status: 'broadcast' }, 'not failed before the cancel is confirmed');

  await f.node.mine(CONFIRMATIONS);
  const failed = await f.waitWithdrawal(w.id, (x) => x.status === 'failed', 'failed');
  t.is(failed.failure_reason, CANCELLED_BY_OPERATOR);
  t.is(failed.txid, cancel);
  // The hold released; the fee the cancel took charged as the network fee.
  t.deepEqual(await f.balance(), { available: minus(before.available, failed.network_fee_charged), hold: '0' });
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.failed']);
  t.true((await securityActions(f)).includes('payout.cancel_requested'));
  t.is(await f.node.rpc.call('gettxout', [sent.txid, 0, false]), null, 'the dropped payout was never mined');
  t.true(await f.ledgerClean());
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
  // The coins that came back pay the next withdrawal.
  const next = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  await f.waitWithdrawal(next.id, (x) => x.status === 'broadcast', 'broadcast');
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(next.id, (x) => x.status === 'completed', 'completed');
});
