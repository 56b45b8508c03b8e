/**
 * The slow scan of archived static addresses on a real Bitcoin node (bcoin regtest): it reads the
 * blocks since the last check for the archived addresses' scripts.
 */
import test from 'ava';
import { killAllBcoins } from '../../helpers/bcoin';
import { BTC, CONFIRMATIONS, startBtcFixture, until, type BtcFixture } from '../chains/btc/btc-fixture';

test.after.always(killAllBcoins);

const address = async (f: BtcFixture, id: string) => (await f.api.get(`/v1/addresses/${id}`)).body;

test('BTC: a deposit to an archived address is not seen in real time; the slow scan reads the blocks since its last check, restores the address (reason deposit) and credits each output once', async (t) => {
  const f = await startBtcFixture({ overrides: { static_addresses: { archived_scan_hours: 100 } } });
  t.teardown(() => f.stop());
  const a = (await f.api.post('/v1/addresses', { customer_id: 'cust-btc', coin_id: BTC })).body;
  const other = (await f.api.post('/v1/addresses', { customer_id: 'cust-other', coin_id: BTC })).body;
  t.is((await f.api.post(`/v1/addresses/${a.id}/archive`, {})).status, 200);
  t.is((await f.api.post(`/v1/addresses/${other.id}/archive`, {})).status, 200);
  const chainId = f.td.daemon.config.chains[0]!.id;
  t.is(f.td.daemon.watched.lookup(chainId, a.address), undefined);

  const txid = await f.pay(a.address, '0.3', '0.2');
  await f.node.mine(CONFIRMATIONS + 1);
  await f.waitScanned();
  t.like(await address(f, a.id), { status: 'archived', deposits: [] });
  t.is((await f.events('deposit.pending')).length, 0);

  const [scan] = f.td.daemon.archivedScans;
  const round = await scan!.run();
  // Bitcoin has no balance call: every archived address's blocks are read.
  t.like(round, { checked: 2, flagged: 2, found: 2 });
  const got = await address(f, a.id);
  t.is(got.status, 'active');
  t.deepEqual(got.deposits.map((d: any) => [d.txid, d.amount, d.status]).sort(), [
    [txid, '0.2', 'confirmed'],
    [txid, '0.3', 'confirmed'],
  ]);
  t.like(await address(f, other.id), { status: 'archived', deposits: [] });
  t.is(await f.available(), '0.5');
  const restored = await f.events('static_address.restored');
  t.deepEqual(
    restored.map((e) => [e.object_id, e.data.reason]),
    [[a.id, 'deposit']],
  );
  t.is((await f.events('deposit.confirmed')).length, 2);
  t.is(f.td.daemon.watched.lookup(chainId, a.address), a.id);

  // The next round reads only blocks after this one's check, and credits nothing again.
  await f.node.mine(1);
  await f.waitScanned();
  const next = await scan!.run();
  t.like(next, { found: 0 });
  t.true(next.blocks <= 1, `blocks read: ${next.blocks}`);
  t.is(await f.available(), '0.5');
  t.is((await f.events('deposit.confirmed')).length, 2);

  // Once restored, the real-time scan has it again: a new deposit is seen in the mempool.
  const again = await f.pay(a.address, '0.1');
  await until(async () => (await address(f, a.id)).deposits.some((d: any) => d.txid === again), 'the new deposit seen in real time');
  t.true(await f.ledgerClean());
});
