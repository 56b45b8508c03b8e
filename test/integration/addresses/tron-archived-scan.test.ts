/**
 * Static addresses on Tron (the full node stand-in): deposits in real time, and the slow scan of an
 * archived address, which reads the blocks since its last check (Tron answers only current balances).
 */
import test from 'ava';
import { until } from '../chains/btc/btc-fixture';
import { CONFIRMATIONS, startTronFixture, type TronFixture } from '../chains/tron/tron-fixture';

const address = async (f: TronFixture, id: string) => (await f.api.get(`/v1/addresses/${id}`)).body;

test('Tron: a TRX deposit to an active static address is credited in real time; a USDT deposit to an archived one is found by the slow scan, restores it and is credited once', async (t) => {
  const f = await startTronFixture({ overrides: { static_addresses: { archived_scan_hours: 100 } } });
  t.teardown(() => f.stop());
  const live = (await f.api.post('/v1/addresses', { customer_id: 'cust-trx', coin_id: f.coin.TRX })).body;
  t.regex(live.address, /^T/);
  const trx = f.pay(live.address, 'TRX', '12');
  f.node.mine(CONFIRMATIONS);
  await until(async () => (await address(f, live.id)).deposits[0]?.status === 'confirmed', 'the TRX deposit confirmed', 15_000);
  t.like((await address(f, live.id)).deposits[0], { txid: trx, amount: '12' });
  t.is(await f.available('TRX'), '12');

  const a = (await f.api.post('/v1/addresses', { customer_id: 'cust-usdt', coin_id: f.coin.USDT })).body;
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`, {})).status, 200);
  const txid = f.pay(a.address, 'USDT', '40');
  f.node.mine(CONFIRMATIONS);
  await f.scanned();
  t.like(await address(f, a.id), { status: 'archived', deposits: [] });

  const [scan] = f.td.daemon.archivedScans;
  t.like(await scan!.run(), { checked: 1, flagged: 1, found: 1 });
  const got = await address(f, a.id);
  t.is(got.status, 'active');
  t.like(got.deposits[0], { txid, amount: '40', status: 'confirmed' });
  t.is(await f.available('USDT'), '40');
  t.deepEqual(
    (await f.events('static_address.restored')).map((e) => e.data.reason),
    ['deposit'],
  );
  t.like(await scan!.run(), { found: 0 });
  t.is(await f.available('USDT'), '40');
  t.is((await f.events('deposit.confirmed')).length, 2);
  t.true(await f.ledgerClean());
});
