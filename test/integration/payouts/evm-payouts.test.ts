/**
 * Withdrawals of ETH and of the test USDT on a real anvil, through the API (issue 19 §2, §4): paid
 * from the account's treasury once its deposits are swept, with EIP-1559 fees and nonces from the
 * daemon's store; the books hold what the chain shows at the end of every test.
 */
import test from 'ava';
import { Transaction } from 'ethers';
import { AddressEntity } from '../../../src/db/entities/chain';
import { Amount } from '../../../src/shared/amount';
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

test('a withdrawal larger than any single deposit waits for the sweeps of the deposits it needs, whatever their minimum, and is paid once', async (t) => {
  const f = await startEvmPayoutFixture({ chain: { sweep: { min: { USDT: '1000' } } } });
  t.teardown(() => f.stop());
  const a = await f.paidInvoice('USDT', '30');
  const b = await f.paidInvoice('USDT', '30');
  const stop = f.miner();
  t.teardown(stop);
  // Under the minimum: nothing is swept while no payout needs it.
  await new Promise((r) => setTimeout(r, 500));
  t.is((await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep'`))[0].n, 0);

  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.USDT, amount: '50', to_address: to });
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 60_000);
  await f.quiet();
  await stop();
  t.is(await f.onChain(to, 'USDT'), 50_000_000n);
  t.is(await f.onChain(a.address, 'USDT'), 0n, 'swept first');
  t.is(await f.onChain(b.address, 'USDT'), 0n, 'swept first');
  const treasury = await treasuryOf(f);
  t.is(await f.onChain(treasury, 'USDT'), 10_000_000n);
  const [sent] = await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'payout' AND status <> 'dropped'`);
  t.is(Number(sent.n), 1, 'signed once');
  t.like(await f.balance('USDT'), { hold: '0', available: Amount.of('10').minus(Amount.of(done.network_fee_charged)).toString() });
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('three withdrawals of one account due together go out in one worker pass with consecutive nonces of the treasury, stored and sent before any is mined', async (t) => {
  const f = await startEvmPayoutFixture({ payouts: { batch_window_seconds: 1.5 } });
  t.teardown(() => f.stop());
  await f.paidAndSwept('ETH', '2');
  const treasury = await treasuryOf(f);
  const before = await f.adapter.nonce(treasury);
  // Blocks only when the test mines them: the three wait in the mempool together.
  await f.node.rpc('evm_setAutomine', [false]);

  const payees = [elsewhere(), elsewhere(), elsewhere()];
  const ws = [];
  for (const [i, to] of payees.entries()) ws.push(await f.withdraw({ coin_id: f.coin.ETH, amount: `0.${i + 1}`, to_address: to }));
  for (const w of ws) await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  t.deepEqual(await f.adapter.nonce(treasury), { latest: before.latest, pending: before.latest + 3 }, 'three in the mempool, none mined');
  const rows: Array<{ nonce: number; withdrawal_id: string }> = await f.td.daemon.store.read.query(
    `SELECT nonce, withdrawal_id FROM account_sends WHERE kind = 'payout' ORDER BY nonce`,
  );
  t.deepEqual(
    rows.map((r) => Number(r.nonce)),
    [before.latest, before.latest + 1, before.latest + 2],
    'consecutive nonces',
  );
  t.deepEqual(
    rows.map((r) => r.withdrawal_id),
    ws.map((w) => w.id),
    'in the order they were asked for',
  );

  const stop = f.miner();
  t.teardown(stop);
  for (const w of ws) await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 60_000);
  await f.quiet();
  await stop();
  for (const [i, to] of payees.entries()) t.is(await f.onChain(to, 'ETH'), eth(`0.${i + 1}`));
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
