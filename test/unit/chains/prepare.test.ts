/**
 * The chain core's first contact with its node, at start before the API takes requests: a cursor
 * exists from then on, so nothing paid after an address is issued can fall before the scan; a node
 * that does not answer leaves the chain's coins in maintenance until a poll succeeds.
 */
import test from 'ava';
import { ChainCursorEntity } from '../../../src/db/entities/chain-scan';
import { ALICE, eth, setup } from './watcher-harness';

test("prepare creates the cursor below the node's tip block without scanning; the next poll scans from there", async (t) => {
  const { node, sink, watcher, signal, store, coinsInMaintenance } = await setup(t, { options: { start_height: null } });
  node.mine([eth(ALICE, 1n, '0xbefore')]);
  await watcher.prepare(signal);
  t.like(await store.read.findOneBy(ChainCursorEntity, { chain_id: 'ethereum' }), { height: 0 });
  t.deepEqual(coinsInMaintenance(), []);
  t.deepEqual(await sink.of('0xbefore'), []);

  node.mine([eth(ALICE, 2n, '0xafter')]);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xbefore'), ['new>seen']);
  t.deepEqual(await sink.of('0xafter'), ['new>seen']);
});

test('a node down at prepare puts the coins in maintenance at once, with no cursor; a successful poll lifts it', async (t) => {
  const { node, watcher, signal, store, coinsInMaintenance } = await setup(t, { options: { start_height: null } });
  node.down = 'connect ECONNREFUSED 127.0.0.1:8545';
  await watcher.prepare(signal);
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  t.is(await store.read.findOneBy(ChainCursorEntity, { chain_id: 'ethereum' }), null);
  t.like(watcher.status(), { maintenance: true, scanned_height: null, last_error: 'connect ECONNREFUSED 127.0.0.1:8545' });

  node.down = null;
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  t.is(watcher.status().scanned_height, node.height);
});

test('prepare keeps an existing cursor (a restart) and scans nothing', async (t) => {
  const { node, sink, watcher, restart, signal, store } = await setup(t);
  node.mine([eth(ALICE, 1n, '0xa')]);
  await watcher.poll(signal);
  node.mine([eth(ALICE, 2n, '0xb')]);
  const again = restart();
  await again.prepare(signal);
  t.is(again.status().scanned_height, 1);
  t.deepEqual(await sink.of('0xb'), []);
  t.like(await store.read.findOneBy(ChainCursorEntity, { chain_id: 'ethereum' }), { height: 1 });
});
