/**
 * A token payout or sweep is complete only when its receipt holds the token's `Transfer` log of
 * the amount to the payee (PRODUCT §14), on a real anvil whose test USDT is made to misbehave
 * (QuirkyToken's code put in its place, balances kept): a token that returns false moves nothing
 * though its transaction succeeds; one that takes a fee on transfer delivers less.
 */
import test, { type ExecutionContext } from 'ava';
import { Amount } from '../../../src/shared/amount';
import { killAllAnvils, makeQuirky, type Quirk } from '../../helpers/anvil';
import { CONFIRMATIONS, elsewhere, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

/** 100 USDT paid in and swept while the token behaves; then it misbehaves as `quirk` says. */
async function funded(t: ExecutionContext, quirk: Quirk): Promise<EvmPayoutFixture> {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidAndSwept('USDT', '100');
  await makeQuirky(f.node, f.usdt, quirk);
  return f;
}

for (const [quirk, what, paid, left] of [
  [1, 'returns false', '0', '0'],
  [2, 'takes a fee on transfer', '39.6', '40'],
] as const) {
  test(`a token payout whose token ${what} fails as a reverted one would: the reason names what arrived, the hold is released, the network fee and what left the wallet charged; the books match the chain`, async (t) => {
    const f = await funded(t, quirk);
    const to = elsewhere();
    const w = await f.withdraw({ coin_id: f.coin.USDT, amount: '40', to_address: to });
    const stop = f.miner();
    t.teardown(stop);
    const failed = await f.waitWithdrawal(w.id, (x) => x.status === 'failed', 'failed', 60_000);
    await f.quiet();
    await stop();

    const receipt = await f.node.rpc<{ status: string }>('eth_getTransactionReceipt', [failed.txid]);
    t.is(receipt.status, '0x1', 'mined and not reverted');
    const taken = left === '0' ? 'the chain took its network fee' : `the ${left} USDT that left the wallet and its network fee are charged`;
    t.is(
      failed.failure_reason,
      `the transaction was mined, but the USDT contract's Transfer logs show ${paid} of 40 USDT reaching ${to} (a token that returns false or takes a fee on transfer); ${taken}`,
    );
    t.is(failed.network_fee_charged, failed.network_fee_reserved);
    t.is(await f.onChain(to, 'USDT'), Amount.of(paid).toBaseUnits(6));
    t.like(await f.balance('USDT'), { hold: '0', available: Amount.of('100').minus(Amount.of(left)).minus(Amount.of(failed.network_fee_charged)).toString() });
    const check = await f.booksMatchChain();
    t.true(check.ok, check.detail);
  });
}

test('a token sweep whose token returns false is not booked as arrived: its deposit is given back and swept again once the token moves it', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const store = f.td.daemon.store;
  const inv = await f.createInvoice('USDT', '100');
  await f.pay(inv.address, 'USDT', '100');
  // The deposit is in; from now on the token's transfers return false.
  await makeQuirky(f.node, f.usdt, 1);
  let stop = f.miner();
  t.teardown(stop);
  await f.node.mine(CONFIRMATIONS - 1);
  await f.until(async () => (await f.invoice(inv.id)).status === 'paid', 'the invoice paid');
  await f.until(
    async () => (await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined' AND succeeded = 0`))[0].n > 0,
    'a sweep mined without delivering',
    60_000,
  );
  const [failedSweep] = await store.read.query(`SELECT id FROM account_sends WHERE kind = 'sweep' AND status = 'mined' AND succeeded = 0`);
  t.is((await store.read.query(`SELECT COUNT(*) AS n FROM evm_swept_transfers WHERE send_id = '${failedSweep.id}'`))[0].n, 0, 'the deposit given back');
  t.is(await f.onChain(inv.address, 'USDT'), 100_000_000n, 'nothing moved');

  await makeQuirky(f.node, f.usdt, 0);
  await f.until(
    async () => (await store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined' AND succeeded = 1`))[0].n > 0,
    'swept once the token behaves',
    60_000,
  );
  await f.quiet();
  await stop();
  const [treasury] = await store.read.query(`SELECT address FROM addresses WHERE purpose = 'treasury'`);
  t.is(await f.onChain(treasury.address, 'USDT'), 100_000_000n);
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
