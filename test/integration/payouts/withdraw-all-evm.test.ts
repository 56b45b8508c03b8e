/**
 * Every EVM withdrawal completes or says why (issue 29 §3, PRODUCT §14), on a real anvil through
 * the API: ETH swept into the treasury arrives less the sweeps' gas, which the operator's book
 * carries; the gas station gives it back when a withdrawal of everything needs it, so `amount:
 * "max"` completes, leaving nothing available or held, and the books equal the chain (ledger
 * reconcile clean); the same for a token; a withdrawal the account's coins cannot fund fails with
 * what is missing, and the account's next one is paid.
 */
import test from 'ava';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import type { FeeQuote } from '../../../src/chains/types';
import { AddressEntity } from '../../../src/db/entities/chain';
import { recordTransaction } from '../../helpers/money-fixtures';
import { killAllAnvils } from '../../helpers/anvil';
import { ledgerReconcile } from '../../helpers/daemon';
import { elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

async function treasuryOf(f: EvmPayoutFixture): Promise<string> {
  return (await f.td.daemon.store.read.findOneByOrFail(AddressEntity, { account_id: f.accountId, purpose: 'treasury' })).address;
}

async function sends(f: EvmPayoutFixture, kind: string, to: string): Promise<number> {
  const [row] = await f.td.daemon.store.read.query(
    `SELECT COUNT(*) AS n FROM account_sends WHERE kind = '${kind}' AND to_address = '${to}' AND status = 'mined'`,
  );
  return Number(row.n);
}

/** Estimates `amount: "max"` of `ticker`, withdraws it, and waits until it is completed and every send is final and booked. */
async function withdrawAll(t: import('ava').ExecutionContext, f: EvmPayoutFixture, ticker: 'ETH' | 'USDT') {
  const { available } = await f.balance(ticker);
  const to = elsewhere();
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin[ticker], amount: 'max', to_address: to });
  t.is(est.status, 200, JSON.stringify(est.body));
  t.is(est.body.total_debit, available, 'the whole available balance');
  const w = await f.withdraw({ coin_id: f.coin[ticker], amount: est.body.amount, to_address: to });
  t.is(w.total_debit, available);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', `${ticker} withdraw-all completed`, 60_000);
  t.is(done.network_fee_charged, est.body.network_fee_reserved);
  await f.quiet();
  return { to, amount: est.body.amount as string };
}

async function booksAgree(t: import('ava').ExecutionContext, f: EvmPayoutFixture) {
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
  const rec = await ledgerReconcile(f.td);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
}

test("withdraw all the ETH after two native sweeps and a token payout: the gas station gives the treasury back the sweeps' gas and the token payout's, the withdrawal completes, 0 is left available and held, and the books equal the chain", async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('ETH', '1');
  await f.paidInvoice('ETH', '0.5');
  await f.paidInvoice('USDT', '100');
  const stop = f.miner();
  t.teardown(stop);
  await f.until(
    async () => (await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n === 3,
    'the deposits swept',
  );
  await f.quiet();
  const treasury = await treasuryOf(f);
  t.true((await f.onChain(treasury, 'ETH')) < eth('1.5'), "the sweeps' gas came out of the deposits");
  // The treasury holds ETH: the token payout's gas comes out of it, no top-up.
  const token = await f.withdraw({ coin_id: f.coin.USDT, amount: '40', to_address: elsewhere() });
  await f.waitWithdrawal(token.id, (x) => x.status === 'completed', 'the token payout completed', 60_000);
  await f.quiet();
  t.is(await sends(f, 'topup', treasury), 0);

  const { to, amount } = await withdrawAll(t, f, 'ETH');
  await stop();
  t.is(await f.onChain(to, 'ETH'), eth(amount));
  t.deepEqual(await f.balance('ETH'), { available: '0', hold: '0' });
  t.is(await sends(f, 'topup', treasury), 1, 'one top-up of the treasury by the gas station');
  await booksAgree(t, f);
});

/** A node whose fee quote stays at 50 gwei: what a sweep is worth and what a payout reserves do not move with anvil's falling base fee. */
class SteadyFees extends EvmAdapter {
  override async feeQuote(): Promise<FeeQuote> {
    return { kind: 'evm', baseFeePerGas: 24_000_000_000n, maxPriorityFeePerGas: 2_000_000_000n, maxFeePerGas: 50_000_000_000n };
  }
}

test("withdraw all the ETH when a deposit is too small to be worth its sweep's gas: the gas station makes up for it at the treasury, the withdrawal completes, and the books equal the chain", async (t) => {
  const f = await startEvmPayoutFixture({ daemon: { adapterFor: (chain) => new SteadyFees(chain) } });
  t.teardown(() => f.stop());
  await f.paidInvoice('ETH', '1');
  // A sweep's gas at 50 gwei is 0.00105 ETH: a deposit of less than twice that is not worth sweeping.
  const tiny = await f.paidInvoice('ETH', '0.0015');
  const stop = f.miner();
  t.teardown(stop);
  await f.until(
    async () => (await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n === 1,
    'the larger deposit swept',
  );
  await f.quiet();
  const { to, amount } = await withdrawAll(t, f, 'ETH');
  await stop();
  t.is(await f.onChain(to, 'ETH'), eth(amount));
  t.is(await f.onChain(tiny.address, 'ETH'), eth('0.0015'), 'never swept: it stays where it is');
  t.deepEqual(await f.balance('ETH'), { available: '0', hold: '0' });
  await booksAgree(t, f);
});

test('withdraw all of a token: the payout completes, 0 is left available and held, and the books equal the chain', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('USDT', '100');
  const stop = f.miner();
  t.teardown(stop);
  const { to, amount } = await withdrawAll(t, f, 'USDT');
  await stop();
  t.is(await f.onChain(to, 'USDT'), BigInt(Math.round(Number(amount) * 1e6)));
  t.deepEqual(await f.balance('USDT'), { available: '0', hold: '0' });
  await booksAgree(t, f);
});

test("an ETH withdrawal the treasury cannot fund fails with what is missing, its hold released, and the account's next withdrawal is paid", async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('ETH', '1');
  const stop = f.miner();
  t.teardown(stop);
  await f.until(
    async () => (await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n === 1,
    'swept',
  );
  await f.quiet();
  // The books hold more than the chain: nothing the operator's costs took, so the gas station gives nothing.
  await recordTransaction(f.td.daemon.store, { accountId: f.accountId, coinId: f.coin.ETH, type: 'deposit', amount: '5' });
  const big = await f.withdraw({ coin_id: f.coin.ETH, amount: '3', to_address: elsewhere() });
  const small = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.2', to_address: elsewhere() });
  const failed = await f.waitWithdrawal(big.id, (x) => x.status === 'failed', 'failed', 60_000);
  t.regex(failed.failure_reason, /^cannot be funded on chain: the account's coins there are 2\.0000\d+ ETH short of what its payout needs$/);
  await f.waitWithdrawal(small.id, (x) => x.status === 'completed', 'the next one completed', 60_000);
  await f.quiet();
  await stop();
  const treasury = await treasuryOf(f);
  t.is(await sends(f, 'topup', treasury), 0, 'the gas station gave nothing');
  const b = await f.balance('ETH');
  t.is(b.hold, '0', "the failed one's hold released");
});

test("a withdrawal waiting for its deposits to be swept does not hold up the account's next withdrawal, which is paid", async (t) => {
  // Without gas in the gas station, the token deposit cannot be swept: its withdrawal waits.
  const f = await startEvmPayoutFixture({ gasStationEth: '0' });
  t.teardown(() => f.stop());
  await f.paidInvoice('USDT', '50');
  await f.paidInvoice('ETH', '1');
  const stop = f.miner();
  t.teardown(stop);
  const waiting = await f.withdraw({ coin_id: f.coin.USDT, amount: '20', to_address: elsewhere() });
  const next = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.3', to_address: elsewhere() });
  await f.waitWithdrawal(next.id, (x) => x.status === 'completed', 'the next one completed', 60_000);
  t.like(await f.get(waiting.id), { status: 'pending', failure_reason: null }, 'still waiting for its sweep, not failed');
});
