/**
 * EVM destinations (issue 19 §2): a mixed-case address with a wrong EIP-55 checksum and the
 * wallet's own addresses (a deposit address in any spelling, a treasury, the gas station) are
 * refused with 422 `address_refused`, creating and holding nothing; all-lower-case and
 * all-upper-case hex carry no checksum and are accepted. The estimate prices a token payout's
 * network fee in the token.
 */
import test from 'ava';
import { AddressEntity } from '../../../src/db/entities/chain';
import { killAllAnvils } from '../../helpers/anvil';
import { elsewhere, startEvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

/** `address` with the case of its first letter digit flipped: no longer its EIP-55 form. */
function badChecksum(address: string): string {
  const i = [...address].findIndex((c, j) => j > 1 && /[a-fA-F]/.test(c));
  const c = address[i]!;
  return address.slice(0, i) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + address.slice(i + 1);
}

test("a wrong EIP-55 checksum and the wallet's own addresses are refused; lower- and upper-case hex are accepted", async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const deposit = await f.paidInvoice('ETH', '1');
  await f.td.daemon.store.write((em) => f.td.daemon.addresses.treasury(em, f.accountId, f.chainId));
  const treasury = (await f.td.daemon.store.read.findOneByOrFail(AddressEntity, { account_id: f.accountId, purpose: 'treasury' })).address;
  const counts = async () =>
    (
      await f.td.daemon.store.read.query(`SELECT (SELECT COUNT(*) FROM withdrawals) AS w, (SELECT COUNT(*) FROM ledger_entries WHERE kind = 'pending') AS h`)
    )[0];
  const before = await counts();

  let good = elsewhere();
  while (good.slice(2) === good.slice(2).toLowerCase()) good = elsewhere();
  const refused = [
    badChecksum(good),
    '0x1234',
    'not-an-address',
    deposit.address,
    deposit.address.toLowerCase(),
    treasury,
    treasury.toUpperCase().replace('0X', '0x'),
    f.gasStation,
    f.gasStation.toLowerCase(),
  ];
  for (const to of refused) {
    for (const path of ['/v1/withdrawals', '/v1/withdrawals/estimate']) {
      const res = await f.api.post(path, { coin_id: f.coin.ETH, amount: '0.1', to_address: to });
      t.is(res.status, 422, `${path} ${to}: ${JSON.stringify(res.body)}`);
      t.is(res.body.error.code, 'address_refused');
    }
  }
  t.deepEqual(await counts(), before, 'nothing created, nothing held');
  t.like(await f.balance('ETH'), { available: '1', hold: '0' });

  for (const to of [good, good.toLowerCase(), `0x${good.slice(2).toUpperCase()}`]) {
    const res = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.ETH, amount: '0.1', to_address: to });
    t.is(res.status, 200, `${to}: ${JSON.stringify(res.body)}`);
  }
  const eth = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.ETH, amount: '0.1' });
  const usdt = await f.api.post('/v1/withdrawals/estimate', { coin_id: f.coin.USDT, amount: '10' });
  t.is(eth.status, 200);
  t.is(usdt.status, 200);
  t.true(Number(eth.body.network_fee_reserved) > 0);
  // The token's fee is the gas of the payout and of its top-up, in USDT at the current rates (ETH at 3000 USD in the test rates).
  t.true(Number(usdt.body.network_fee_reserved) > Number(eth.body.network_fee_reserved), JSON.stringify(usdt.body));
});
