/**
 * Withdrawing everything on Tron (issue 29 §3, PRODUCT §14), on the node stand-in through the API:
 * `amount: "max"` of TRX and of a TRC-20 token is the available balance less the reserved network
 * fee; each completes from the treasury, leaving nothing available or held, and `ledger verify` and
 * `ledger reconcile` are clean.
 */
import test from 'ava';
import { waitScannedTo } from '../../helpers/chain-scan';
import { ledgerReconcile } from '../../helpers/daemon';
import { CONFIRMATIONS, elsewhere, startTronPayoutFixture, units, type Ticker, type TronPayoutFixture } from './tron-payout-fixture';

async function withdrawAll(t: import('ava').ExecutionContext, f: TronPayoutFixture, ticker: Ticker): Promise<{ to: string; amount: string }> {
  const { available } = await f.balance(ticker);
  const to = elsewhere();
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin[ticker], amount: 'max', to_address: to });
  t.is(est.status, 200, JSON.stringify(est.body));
  t.is(est.body.total_debit, available, 'the whole available balance');
  const w = await f.withdraw({ coin_id: f.coin[ticker], amount: est.body.amount, to_address: to });
  t.is(w.total_debit, available);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', `${ticker} withdraw-all completed`);
  t.is(done.network_fee_charged, est.body.network_fee_reserved);
  t.deepEqual(await f.balance(ticker), { available: '0', hold: '0' });
  return { to, amount: est.body.amount };
}

async function clean(t: import('ava').ExecutionContext, f: TronPayoutFixture) {
  await f.quiet();
  await booksAgree(t, f);
}

async function booksAgree(t: import('ava').ExecutionContext, f: TronPayoutFixture) {
  const c = await f.clean();
  t.true(c.ok, c.detail);
  const rec = await ledgerReconcile(f.td);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
}

test('withdraw all the TRX: the payout completes from the treasury, 0 is left available and held, and the books equal the chain', async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('TRX', '300');
  await f.paidInvoice('TRX', '120');
  const { to, amount } = await withdrawAll(t, f, 'TRX');
  t.is(f.node.trxBalance(to), units(amount));
  await clean(t, f);
});

test("withdraw all the TRX after token payouts burnt bandwidth from the treasury's TRX: the gas station gives it back, the payout completes, and the books equal the chain", async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('TRX', '300');
  await f.paidInvoice('USDT', '100');
  const treasury = await f.treasury();
  // A treasury's 600 free bytes a day pay for one token transfer; the next ones burn its TRX.
  for (const amount of ['10', '11', '12']) await f.tokenPayout(amount);
  await f.quiet();
  const burnt = await f.td.daemon.store.read.query(`SELECT fee_booked FROM chain_payouts WHERE fee_booked IS NOT NULL AND fee_booked <> '0'`);
  t.true(burnt.length > 0, "a token payout burnt the treasury's TRX");
  const before = f.node.trxBalance(treasury);
  const { to, amount } = await withdrawAll(t, f, 'TRX');
  t.is(f.node.trxBalance(to), units(amount));
  t.true(before < units('300'), "the treasury held less than the account's TRX");
  await clean(t, f);
});

test('withdraw all the TRX when a deposit is too small to be worth its sweep: the gas station makes up for it at the treasury, the payout completes, and the books equal the chain', async (t) => {
  // Deposits under 10 TRX wait for a payout to need them; one under twice a transfer's bandwidth (0.54 TRX) is never worth sweeping.
  const f = await startTronPayoutFixture({ sweep: { min: { TRX: '10' } } });
  t.teardown(() => f.stop());
  await f.paidInvoice('TRX', '300');
  const tiny = await f.paidInvoice('TRX', '0.3');
  const { to, amount } = await withdrawAll(t, f, 'TRX');
  t.is(f.node.trxBalance(to), units(amount));
  t.is(f.node.trxBalance(tiny.address), units('0.3'), 'never swept: it stays where it is');
  // Every send final and scanned (not f.quiet(): that waits for every deposit swept).
  await f.until(
    async () => Number((await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE status IN ('signed', 'broadcast')`))[0].n) === 0,
    'every send final',
  );
  f.node.mine(CONFIRMATIONS);
  await waitScannedTo(f.td, f.node.height, 20_000);
  await booksAgree(t, f);
});

test('withdraw all of a TRC-20 token: the payout completes from the treasury, 0 is left available and held, and the books equal the chain', async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('USDT', '50');
  const { to, amount } = await withdrawAll(t, f, 'USDT');
  t.is(f.node.tokenBalance(to), units(amount));
  await clean(t, f);
});

test("withdraw all the TRX while a token payout that burns the treasury's TRX is on its way: the TRX payout waits for it, the gas station gives the burn back, it completes once, and the books equal the chain", async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('TRX', '300');
  await f.paidInvoice('USDT', '100');
  const treasury = await f.treasury();
  // The treasury's free bytes of the day pay for one token transfer; the next one burns its TRX.
  await f.tokenPayout('10');
  await f.quiet();
  const token = await f.withdraw({ coin_id: f.coin.USDT, amount: '11', to_address: elsewhere() });
  await f.untilInPool(token.id, "the token payout in the node's pool");
  // Blocks go on without it: the token payout stays on its way while the TRX payout is decided.
  f.node.holdPending(true);
  const { available } = await f.balance('TRX');
  const to = elsewhere();
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.TRX, amount: 'max', to_address: to });
  t.is(est.body.total_debit, available);
  const all = await f.withdraw({ coin_id: f.coin.TRX, amount: est.body.amount, to_address: to });
  // What the treasury holds covers the TRX payout only before the token payout's burn: it must not go out beside it.
  const deadline = Date.now() + 2_000;
  while (Date.now() < deadline && (await f.candidates(all.id)).length === 0) {
    f.node.mine();
    await new Promise((r) => setTimeout(r, 60));
  }
  t.deepEqual(await f.candidates(all.id), [], 'no TRX payout signed while the token payout may still burn the TRX it counts on');
  f.node.holdPending(false);
  await f.waitWithdrawal(token.id, (x) => x.status === 'completed', 'the token payout completed');
  const done = await f.waitWithdrawal(all.id, (x) => x.status === 'completed', 'the TRX payout completed');
  t.is(done.network_fee_charged, est.body.network_fee_reserved);
  t.is((await f.candidates(all.id)).length, 1, 'signed once');
  t.is(f.node.trxBalance(to), units(est.body.amount));
  const topups = await f.td.daemon.store.read.query(
    `SELECT amount FROM account_sends WHERE kind = 'topup' AND to_address = '${treasury}' AND status = 'mined'`,
  );
  t.true(topups.length > 0, 'the gas station gave the treasury back what the token payout burnt');
  t.true(f.node.trxBalance(treasury) >= 0n);
  t.deepEqual(await f.balance('TRX'), { available: '0', hold: '0' });
  await clean(t, f);
});
