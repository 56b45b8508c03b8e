/**
 * A Tron token payout or sweep is complete only when its transaction's logs hold the token's
 * `Transfer` of the amount to the payee (PRODUCT §14), on the node stand-in made to misbehave: a
 * token that returns false moves nothing though its call succeeds; one that takes a fee on
 * transfer delivers less.
 */
import test from 'ava';
import { Amount } from '../../../src/shared/amount';
import { elsewhere, startTronPayoutFixture, units } from './tron-payout-fixture';

test('a USDT payout whose token takes a fee on transfer fails as a reverted one would: the reason names what arrived, the hold is released, what left the wallet and the network fee charged; books and chain agree', async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('USDT', '50');
  const treasury = await f.treasury();
  await f.until(async () => f.node.tokenBalance(treasury) === units('50'), 'the deposit swept into the treasury');
  await f.quiet();
  f.node.misbehave('fee');
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.USDT, amount: '20', to_address: to });
  const failed = await f.waitWithdrawal(w.id, (x) => x.status === 'failed', 'failed');

  t.is(f.node.info(failed.txid).receipt.result, 'SUCCESS', 'mined, and the call succeeded');
  t.is(
    failed.failure_reason,
    `the transaction was mined, but the USDT contract's Transfer logs show 19.8 of 20 USDT reaching ${to} (a token that returns false or takes a fee on transfer); the 20 USDT that left the wallet and its network fee are charged`,
  );
  t.is(f.node.tokenBalance(to), units('19.8'));
  t.like(await f.balance('USDT'), { hold: '0', available: Amount.of('30').minus(Amount.of(failed.network_fee_charged)).toString() });
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});

test('a USDT sweep whose token returns false is not booked as arrived: its deposit is given back and swept once the token moves it', async (t) => {
  const f = await startTronPayoutFixture();
  t.teardown(() => f.stop());
  const deposit = await f.paidInvoice('USDT', '50');
  f.node.misbehave('false');
  const store = f.td.daemon.store;
  await f.until(
    async () => (await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined' AND succeeded = 0`))[0].n > 0,
    'a sweep mined without delivering',
  );
  const [failedSweep] = await store.read.query(`SELECT id FROM account_sends WHERE kind = 'sweep' AND status = 'mined' AND succeeded = 0`);
  t.is((await store.read.query(`SELECT COUNT(*) AS n FROM evm_swept_transfers WHERE send_id = '${failedSweep.id}'`))[0].n, 0, 'the deposit given back');
  t.is(f.node.tokenBalance(deposit.address), units('50'), 'nothing moved');

  f.node.misbehave('none');
  const treasury = await f.treasury();
  await f.until(async () => f.node.tokenBalance(treasury) === units('50'), 'swept once the token behaves');
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});
