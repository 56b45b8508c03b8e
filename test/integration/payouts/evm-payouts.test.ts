/**
 * Withdrawals of ETH and of the test USDT on a real anvil, through the API (issue 19 §2, §4): paid
 * from the account's treasury once its deposits are swept, with EIP-1559 fees and nonces from the
 * daemon's store; the books hold what the chain shows at the end of every test.
 */
import test from 'ava';
import { Transaction } from 'ethers';
import { AddressEntity } from '../../../src/db/entities/chain';
import { Amount } from '../../../src/shared/money';
import { killAllAnvils } from '../../helpers/anvil';
import { elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

async function treasuryOf(f: EvmPayoutFixture): Promise<string> {
  return (await f.td.daemon.store.read.findOneByOrFail(AddressEntity, { account_id: f.accountId, purpose: 'treasury' })).address;
}

test('an ETH and a USDT withdrawal are paid from the treasury and completed; the payees hold the amounts, the holds are settled, the books match the chain', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  await f.paidInvoice('ETH', '1');
  await f.paidInvoice('USDT', '100');
  const stop = f.miner();
  t.teardown(stop);

  const ethTo = elsewhere();
  const usdtTo = elsewhere().toLowerCase();
  const w1 = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.3', to_address: ethTo });
  const w2 = await f.withdraw({ coin_id: f.coin.USDT, amount: '40', to_address: usdtTo });
  t.true(Number(w1.network_fee_reserved) > 0 && Number(w2.network_fee_reserved) > 0, 'a network fee reserved in the withdrawn coin');
  const done1 = await f.waitWithdrawal(w1.id, (w) => w.status === 'completed', 'ETH completed', 60_000);
  const done2 = await f.waitWithdrawal(w2.id, (w) => w.status === 'completed', 'USDT completed', 60_000);
  await f.quiet();
  await stop();

  t.is(await f.onChain(ethTo, 'ETH'), eth('0.3'));
  t.is(await f.onChain(usdtTo, 'USDT'), 40_000_000n);
  const treasury = await treasuryOf(f);
  for (const done of [done1, done2]) {
    const receipt = await f.node.rpc<{ from: string; status: string }>('eth_getTransactionReceipt', [done.txid]);
    t.is(receipt.status, '0x1');
    t.is(receipt.from.toLowerCase(), treasury.toLowerCase(), 'sent from the treasury');
    const tx = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [done.txid]));
    t.is(tx.type, 2, 'EIP-1559');
    t.is(done.network_fee_charged, done.network_fee_reserved);
    t.true(done.confirmations >= 3);
  }
  t.like(await f.balance('ETH'), { hold: '0', available: Amount.of('0.7').minus(Amount.of(done1.network_fee_charged)).toString() });
  t.like(await f.balance('USDT'), { hold: '0', available: Amount.of('60').minus(Amount.of(done2.network_fee_charged)).toString() });
  const rows = await f.transactions(`type=withdrawal`);
  t.is(rows.length, 2);
  t.true(rows.every((r: any) => r.status === 'confirmed'));
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
