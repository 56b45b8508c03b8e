/**
 * Tron payouts on the node stand-in, through the API (issue 20 §4): TRX and TRC-20 USDT deposits
 * swept into the treasury, the token sweep and the token payout paid with energy the gas station
 * staked and delegated (no TRX burnt for energy), TRX and USDT withdrawals completed; the books
 * and the chain agree at the end (`ledger verify`, `ledger reconcile`).
 */
import test from 'ava';
import { ENERGY_TO_NEW_HOLDER } from '../../helpers/tron-node';
import { elsewhere, minedFrom, startTronPayoutFixture, units } from './tron-payout-fixture';

test('TRX and USDT withdrawals completed from the treasury; the token sweep and the token payout burn no TRX for energy (staked and delegated), every delegation is taken back; books and chain agree', async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  const usdtDeposit = await f.paidInvoice('USDT', '50');
  const trxDeposit = await f.paidInvoice('TRX', '300');
  const treasury = await f.treasury();
  await f.until(
    async () => f.node.tokenBalance(treasury) === units('50') && f.node.trxBalance(treasury) > units('290'),
    'both deposits swept into the treasury',
  );
  t.is(f.node.tokenBalance(usdtDeposit.address), 0n);
  t.true(f.node.trxBalance(trxDeposit.address) < units('1'), 'the TRX deposit sent its balance');
  // The token deposit got no TRX but its activation's single sun, and burnt none of it.
  t.is(f.node.trxBalance(usdtDeposit.address), 1n);
  const [sweep] = minedFrom(f.node, usdtDeposit.address);
  t.truthy(sweep);
  const sweepInfo = f.node.info(sweep!.txID);
  t.is(sweepInfo.receipt.result, 'SUCCESS');
  t.is(sweepInfo.receipt.energy_fee, undefined, "no TRX burnt for the sweep's energy");
  t.true((sweepInfo.receipt.energy_usage ?? 0) >= ENERGY_TO_NEW_HOLDER, 'its energy was the delegated stake');
  t.is(sweepInfo.fee, undefined, 'the sweep burnt nothing at all');
  // The gas station staked for energy: its frozen TRX left its balance, none of it was burnt.
  t.true(f.node.resources(f.gasStation).tronPowerLimit! >= 100_000, 'the gas station staked sweep.stake');

  // Estimates reserve what the transfer takes on chain, at the burn prices, in the withdrawn coin: a token
  // transfer's energy from the dry run from the treasury (to a new holder) and 350 bytes of bandwidth,
  // (29,650 × 420 + 350 × 1,000) sun = 12.803 TRX at 0.25 USD = 3.20075 USDT; a TRX payment's 270 bytes
  // and, to an address without an account, its creation (1 + 0.1 TRX).
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.USDT, amount: '20', to_address: elsewhere() });
  t.is(est.status, 200, JSON.stringify(est.body));
  t.like(est.body, { network_fee_reserved: '3.20075', total_debit: '23.20075' });
  const estTrx = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.TRX, amount: '20', to_address: elsewhere() });
  t.like(estTrx.body, { network_fee_reserved: '1.37' });
  const estKnown = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.TRX, amount: '20', to_address: f.node.payer });
  t.like(estKnown.body, { network_fee_reserved: '0.27' }, 'an address with an account costs no creation');

  const trxTo = elsewhere();
  const usdtTo = elsewhere();
  const wTrx = await f.withdraw({ coin_id: f.coin.TRX, amount: '25', to_address: trxTo });
  const wUsdt = await f.withdraw({ coin_id: f.coin.USDT, amount: '20', to_address: usdtTo });
  const doneTrx = await f.waitWithdrawal(wTrx.id, (w) => w.status === 'completed', 'the TRX withdrawal completed');
  const doneUsdt = await f.waitWithdrawal(wUsdt.id, (w) => w.status === 'completed', 'the USDT withdrawal completed');
  t.is(f.node.trxBalance(trxTo), units('25'));
  t.is(f.node.tokenBalance(usdtTo), units('20'));
  const payoutInfo = f.node.info(doneUsdt.txid);
  t.is(payoutInfo.receipt.result, 'SUCCESS');
  t.is(payoutInfo.receipt.energy_fee, undefined, "no TRX burnt for the token payout's energy");
  t.truthy(doneTrx.txid);
  // One transaction per withdrawal left the treasury.
  const fromTreasury = minedFrom(f.node, treasury);
  t.is(fromTreasury.length, 2);

  await f.quiet();
  // Every delegation was taken back: the gas station's stake is all its own again.
  const station = f.node.resources(f.gasStation);
  t.is(f.node.resources(treasury).EnergyLimit ?? 0, 0, 'nothing stays delegated to the treasury');
  t.true((station.EnergyLimit ?? 0) > 0);
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});

test('without staked energy a token sweep burns TRX within sweep.max_burn: the gas station tops the deposit up with the burn, booked; books and chain agree', async (t) => {
  const f = await startTronPayoutFixture({ sweep: { stake: '0', max_burn: '20' } });
  t.teardown(() => f.stop());
  const deposit = await f.paidInvoice('USDT', '40');
  const treasury = await f.treasury();
  await f.until(async () => f.node.tokenBalance(treasury) === units('40'), 'the deposit swept');
  const [sweep] = minedFrom(f.node, deposit.address);
  const info = f.node.info(sweep!.txID);
  t.is(info.receipt.result, 'SUCCESS');
  // 29,650 energy to a new holder at 420 sun: 12.453 TRX burnt, what the gas station gave it beside the activation's sun.
  t.is(info.receipt.energy_fee, ENERGY_TO_NEW_HOLDER * 420);
  t.is(f.node.trxBalance(deposit.address), 0n, 'the top-up (the burn less the sun of the activation) all went into the burn');
  t.is(f.node.resources(f.gasStation).tronPowerLimit ?? 0, 0, 'nothing staked');
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});

test('without staked energy to delegate and no sweep.max_burn a token sweep waits, nothing burnt, and coinkeep status says why; once the gas station stakes, it goes out', async (t) => {
  const f = await startTronPayoutFixture({ sweep: { stake: '0' } });
  t.teardown(() => f.stop());
  const deposit = await f.paidInvoice('USDT', '40');
  const station = () => f.td.daemon.evmPayouts.gasStations().find((g) => g.chain_id === 'tron')!;
  await f.until(async () => /token sweep\(s\) wait for energy/.test(station().warning ?? ''), 'the status warning');
  t.is(f.node.tokenBalance(deposit.address), units('40'), 'the deposit waits');
  t.is(f.node.trxBalance(deposit.address), 1n, 'activated, nothing given to burn');
  t.deepEqual(minedFrom(f.node, deposit.address), [], 'it sent nothing');
  // The operator raises sweep.stake (a restart reads it; here the running daemon's setting is changed): the gas station stakes.
  f.td.daemon.config.chains[0]!.tron!.stake_sun = 100_000n * 1_000_000n;
  const treasury = await f.treasury();
  await f.until(async () => f.node.tokenBalance(treasury) === units('40'), 'the deposit swept once staked');
  const [sweep] = minedFrom(f.node, deposit.address);
  t.is(f.node.info(sweep!.txID).receipt.energy_fee, undefined, 'no TRX burnt');
  await f.until(async () => station().warning === null, 'the warning cleared');
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});
