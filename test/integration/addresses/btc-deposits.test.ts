/** Deposits to static addresses on a real Bitcoin node (bcoin regtest), as the merchant sees them. */
import test from 'ava';
import { killAllBcoins } from '../../helpers/bcoin';
import { BTC, CONFIRMATIONS, startBtcFixture, until, type BtcFixture } from '../chains/btc/btc-fixture';

test.after.always(killAllBcoins);

const waitAddress = async (f: BtcFixture, id: string, ok: (a: any) => boolean, what: string) => {
  let last: any;
  await until(
    async () => ok((last = (await f.api.get(`/v1/addresses/${id}`)).body)),
    () => `${what}: ${JSON.stringify(last)}`,
  );
  return last;
};

test('BTC deposits: pending in the mempool, confirmed and credited less the fee, two outputs are two deposits, a reorganisation reverts them with adjustments', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const res = await f.api.post('/v1/addresses', { customer_id: 'cust-btc', coin_id: BTC });
  t.is(res.status, 201);
  const a = res.body;
  t.regex(a.address, /^rb1/);

  const txid = await f.pay(a.address, '0.3', '0.2');
  const seen = await waitAddress(f, a.id, (x) => x.deposits.length === 2, 'two deposits seen');
  t.true(seen.deposits.every((d: any) => d.status === 'pending' && d.txid === txid));
  t.is((await f.events('deposit.pending')).length, 2);

  const [block] = await f.node.mine(CONFIRMATIONS);
  const confirmed = await waitAddress(f, a.id, (x) => x.deposits.every((d: any) => d.status === 'confirmed'), 'both confirmed');
  t.deepEqual(confirmed.deposits.map((d: any) => d.amount).sort(), ['0.2', '0.3']);
  t.is(await f.available(), '0.495');
  t.is((await f.events('deposit.confirmed')).length, 2);

  await f.node.invalidateBlock(block!);
  await f.node.mine(CONFIRMATIONS + 1);
  await waitAddress(f, a.id, (x) => x.deposits.every((d: any) => d.status === 'reverted'), 'both reverted');
  t.is(await f.available(), '0');
  t.is((await f.transactions(`address_id=${a.id}&type=adjustment`)).length, 2);
  t.is((await f.events('deposit.reverted')).length, 2);
  t.true(await f.ledgerClean());
});
