import test from 'ava';
import { ChainBlockEntity, ChainCursorEntity } from '../../../src/db/entities/chain-scan';
import { Store } from '../../../src/db/store';
import { tempPostgres } from '../../helpers/pg-database';
import { ALICE, BOB, eth, setup, usdt } from '../../unit/chains/watcher-harness';

// The chain core's per-block SQL (headers, cursor, pruning, the recorder's reads and promotion) is
// plain SQL for both dialects: the same scans, on PostgreSQL.

test('on PostgreSQL: batches catch up, transfers are recorded once and promoted, the cursor moves and old headers are pruned', async (t) => {
  const url = await tempPostgres(t);
  const { node, sink, watcher, signal, transfers, store } = await setup(t, { url, confirmations: 2, options: { batch_size: 2, reorg_max_depth: 3 } });
  // Three transfers of one transaction and two more: the recorder's IN lists are not a power of two long.
  node.mine([usdt(ALICE, 1n, '0xt1', 0), usdt(BOB, 2n, '0xt1', 1), eth(ALICE, 3n, '0xt1')]);
  node.mine([eth(BOB, 4n, '0xt2'), eth(ALICE, 5n, '0xt3')]);
  node.mineEmpty(4);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>confirmed', 'new>confirmed', 'new>confirmed']);
  t.deepEqual(await sink.of('0xt3'), ['new>seen', 'seen>confirmed']);
  t.is((await transfers()).length, 5);
  t.like(await store.read.findOneBy(ChainCursorEntity, { chain_id: 'ethereum' }), { height: 6, hash: '0xa6' });
  t.deepEqual(
    (await store.read.find(ChainBlockEntity, { order: { height: 'ASC' } })).map((b) => b.height),
    [3, 4, 5, 6],
  );

  node.mine([eth(ALICE, 6n, '0xt4')]);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt4'), ['new>seen']);
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt4'), ['new>seen', 'seen>confirmed']);
  t.like(watcher.status(), { scanned_height: 8, lag: 0, last_error: null });
});

test("on PostgreSQL: a reorganisation reverts the dropped block's transfer and records the new branch", async (t) => {
  const url = await tempPostgres(t);
  const { node, sink, watcher, signal, transfers } = await setup(t, { url, confirmations: 3 });
  node.mine([eth(ALICE, 10n, '0xkept')]);
  node.mine([eth(BOB, 20n, '0xlost')]);
  await watcher.poll(signal);
  node.cutBackTo(2);
  node.mine([eth(ALICE, 30n, '0xnew')], 'b');
  node.mine([], 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xlost'), ['new>seen', 'seen>reverted']);
  t.deepEqual(await sink.of('0xkept'), ['new>seen', 'seen>confirmed']);
  t.deepEqual(
    (await transfers()).map((r) => [r.txid, r.status, r.block_height, r.block_hash]),
    [
      ['0xkept', 'confirmed', 1, '0xa1'],
      ['0xlost', 'reverted', 2, '0xa2'],
      ['0xnew', 'seen', 2, '0xb2'],
    ],
  );
  t.like(watcher.status(), { scanned_height: 3, maintenance: false });
});

test('on PostgreSQL: of two daemons one scans the chain; the other shows its progress out of maintenance and scans on from its cursor once the first is gone', async (t) => {
  const url = await tempPostgres(t);
  const { node, sink, watcher, restart, signal, store } = await setup(t, { url, confirmations: 2 });
  const other = await Store.open({ url });
  t.teardown(() => other.close());
  const follower = restart(undefined, other);
  node.mine([eth(ALICE, 1n, '0xt1')]);
  await watcher.prepare(signal);
  await follower.prepare(signal);
  await watcher.poll(signal);
  await follower.poll(signal);
  t.like(watcher.status(), { scanning: true, scanned_height: 1, maintenance: false });
  t.like(follower.status(), { scanning: false, scanned_height: 1, node_tip: null, maintenance: false, last_error: null });

  // The scanning daemon's session ends (the daemon died).
  await store.roles.close();
  node.mine([eth(BOB, 2n, '0xt2')]);
  await follower.poll(signal);
  t.like(follower.status(), { scanning: true, scanned_height: 2, node_tip: 2, maintenance: false });
  await watcher.poll(signal);
  t.like(watcher.status(), { scanning: false, scanned_height: 2, maintenance: false });
  t.deepEqual(await sink.of('0xt1'), ['new>seen', 'seen>confirmed']);
  t.deepEqual(await sink.of('0xt2'), ['new>seen']);
});
