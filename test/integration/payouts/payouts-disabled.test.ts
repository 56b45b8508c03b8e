/**
 * `payouts.enabled: false` (PRODUCT §8a, §14): no payout worker runs, withdrawals wait in `pending`
 * with their holds, and everything else (scans, sweeps) goes on. On a real anvil, where payouts go
 * out within a few blocks when enabled (evm-payouts.test.ts).
 */
import test from 'ava';
import { killAllAnvils } from '../../helpers/anvil';
import { waitScannedTo } from '../../helpers/chain-scan';
import { elsewhere, startEvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

test('with payouts.enabled false no payout worker runs: a withdrawal waits in pending with its hold while blocks are scanned and deposits swept', async (t) => {
  const f = await startEvmPayoutFixture({ payouts: { enabled: false } });
  t.teardown(() => f.stop());
  t.deepEqual(f.td.daemon.withdrawals.payoutJobs, []);
  await f.paidInvoice('ETH', '1');
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.2', to_address: elsewhere() });
  const stop = f.miner();
  t.teardown(stop);
  await f.until(
    async () => (await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n > 0,
    'swept',
    60_000,
  );
  await f.quiet();
  await stop();
  await f.node.mine(5);
  await waitScannedTo(f.td, await f.node.blockNumber(), 10_000);

  t.like(await f.get(w.id), { status: 'pending', txid: null });
  t.is((await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'payout'`))[0].n, 0, 'nothing signed');
  t.like(await f.balance('ETH'), { hold: w.total_debit });
});
