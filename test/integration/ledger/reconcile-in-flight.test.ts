/**
 * `ledger reconcile` while a token payout is on its way (issue 34, found by the simulator: seed
 * 501): the payout's transaction is mined, so the chain shows its gas taken from the treasury's
 * ETH, but the withdrawal waits for its confirmations and its fee is booked only then. ETH is
 * `in_flight` (at most the payout's gas caps), never a `difference`; once final, both are `ok`.
 */
import test from 'ava';
import { reconcile } from '../../../src/ledger/reconcile';
import { Amount } from '../../../src/shared/amount';
import { killAllAnvils } from '../../helpers/anvil';
import { waitScannedTo } from '../../helpers/chain-scan';
import { elsewhere, startEvmPayoutFixture } from '../payouts/evm-payout-fixture';
import { elsewhere as tronElsewhere, startTronPayoutFixture } from '../payouts/tron-payout-fixture';

test.after.always(killAllAnvils);

test('a USDT payout mined but not yet confirmed: ETH is in flight by its gas, not a difference; both ok once it is final', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidAndSwept('USDT', '50');
  await f.quiet();
  const report = async () => {
    await waitScannedTo(f.td, await f.node.blockNumber(), 20_000);
    const r = await reconcile({ store: f.td.daemon.store, catalog: f.td.daemon.catalog, holdingsOf: () => f.adapter });
    return (ticker: string) => r.coins.find((c) => c.ticker === ticker)!;
  };
  t.like((await report())('ETH'), { status: 'ok' });

  const w = await f.withdraw({ coin_id: f.coin.USDT, amount: '10', to_address: elsewhere() });
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast' && x.txid !== null, 'the payout broadcast');
  // One block: the payout is mined, short of its confirmations.
  await f.node.mine(1);
  await f.until(async () => (await f.node.rpc<unknown>('eth_getTransactionReceipt', [sent.txid])) !== null, 'the payout mined');
  const during = await report();
  t.is((await f.get(w.id)).status, 'broadcast', 'not final yet');
  t.like(during('ETH'), { status: 'in_flight' }, JSON.stringify(during('ETH')));
  t.not(during('ETH').difference, '0', "the chain shows the payout's gas taken");
  const [row] = await f.td.daemon.store.read.query(`SELECT max_cost FROM account_sends WHERE kind = 'payout' AND withdrawal_id = '${w.id}'`);
  t.true(Amount.of(during('ETH').in_flight_out).gte(Amount.fromBaseUnits(BigInt(row.max_cost), 18)), "the payout's max cost is among what is in flight");
  t.like(during('USDT'), { status: 'in_flight' });

  const stop = f.miner();
  try {
    await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'the payout completed');
    await f.quiet();
  } finally {
    await stop();
  }
  const after = await report();
  t.like(after('ETH'), { status: 'ok', difference: '0' });
  t.like(after('USDT'), { status: 'ok', difference: '0' });
});

test('a Tron USDT payout mined but not yet confirmed: the TRX its bandwidth burnt is in flight, not a difference; both ok once it is final', async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('USDT', '100');
  // The treasury's free bytes of the day pay for one token transfer; the next one burns its TRX.
  await f.tokenPayout('10');
  await f.quiet();
  const report = async () => {
    await waitScannedTo(f.td, f.node.height, 20_000);
    const r = await reconcile({ store: f.td.daemon.store, catalog: f.td.daemon.catalog, holdingsOf: () => f.adapter });
    return (name: string) => r.coins.find((c) => c.chain_id === 'tron' && c.ticker === name)!;
  };
  t.like((await report())('TRX'), { status: 'ok' });

  const w = await f.withdraw({ coin_id: f.coin.USDT, amount: '11', to_address: tronElsewhere() });
  await f.untilInPool(w.id, "the token payout in the node's pool");
  // One block: the payout is mined, short of its confirmations.
  f.node.mine();
  const during = await report();
  t.is((await f.get(w.id)).status, 'broadcast', 'not final yet');
  t.like(during('TRX'), { status: 'in_flight' }, JSON.stringify(during('TRX')));
  t.not(during('TRX').difference, '0', 'the chain shows the bandwidth burnt');
  const [candidate] = await f.td.daemon.store.read.query(
    `SELECT c.fee FROM chain_payout_legs l JOIN chain_payout_candidates c ON c.payout_id = l.payout_id WHERE l.withdrawal_id = '${w.id}'`,
  );
  t.true(Amount.of(during('TRX').in_flight_out).gte(Amount.fromBaseUnits(BigInt(candidate.fee), 6)), "the payout's most burn is among what is in flight");

  await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'the payout completed');
  await f.quiet();
  const after = await report();
  t.like(after('TRX'), { status: 'ok', difference: '0' });
  t.like(after('USDT'), { status: 'ok', difference: '0' });
});
