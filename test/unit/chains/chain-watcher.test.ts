import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { LessThan } from 'typeorm';
import { ChainBlockEntity, ChainCursorEntity } from '../../../src/db/entities/chain-scan';
import { ALICE, BOB, eth, setup, STRANGER, USDT, usdt } from './watcher-harness';

test('a transfer in a block with fewer than `confirmations` blocks is seen, then confirmed once deep enough', async (t) => {
  const { node, sink, watcher, signal, transfers } = await setup(t, { confirmations: 3 });
  node.mine([eth(ALICE, 1_500_000_000_000_000_000n, '0xt1')]);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>seen']);
  const [row] = await transfers();
  t.like(row, { status: 'seen', amount: '1.5', confirmations: 1, block_height: 1, address: ALICE });
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>seen']);
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>seen', 'seen>confirmed']);
  t.like((await transfers())[0], { status: 'confirmed', confirmations: 3 });
  t.like(watcher.status(), { node_tip: 3, scanned_height: 3, lag: 0, maintenance: false, last_error: null });
});

test("token transfers are recorded in the coin's units, and a transfer already deep enough is confirmed at first sight", async (t) => {
  const { node, sink, watcher, signal, transfers } = await setup(t, { confirmations: 2 });
  node.mine([usdt(BOB, 25_500_000n, '0xt1', 4), usdt(BOB, 1n, '0xt1', 5)]);
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>confirmed', 'new>confirmed']);
  t.deepEqual(
    (await transfers()).map((r) => [r.coin_id, r.output_index, r.amount]),
    [
      [coinId('ethereum', USDT), 4, '25.5'],
      [coinId('ethereum', USDT), 5, '0.000001'],
    ],
  );
});

test('transfers to unwatched addresses, of unconfigured assets, or of zero are not recorded', async (t) => {
  const { node, sink, watcher, signal, transfers } = await setup(t);
  node.mine([
    eth(STRANGER, 5n, '0xt1'),
    usdt(ALICE.toLowerCase(), 5n, '0xt2'),
    { asset: '0xOtherToken', to: ALICE, amount: 5n, txid: '0xt3', index: 0 },
    eth(ALICE, 0n, '0xt4'),
  ]);
  await watcher.poll(signal);
  t.deepEqual(await sink.calls(), []);
  t.deepEqual(await transfers(), []);
});

test("a fresh cursor starts at the node's tip unless start_height is set", async (t) => {
  const { node, sink, restart, signal, store } = await setup(t, { options: { start_height: null } });
  node.mine([eth(ALICE, 1n, '0xold')]);
  node.mine([eth(ALICE, 2n, '0xtip')]);
  await restart().poll(signal);
  t.deepEqual(await sink.of('0xold'), []);
  t.deepEqual(await sink.of('0xtip'), ['new>seen']);
  t.like(await store.read.findOneBy(ChainCursorEntity, { chain_id: 'ethereum' }), { height: 2, hash: '0xa2' });
});

test('catching up fetches blocks in batches of batch_size and finds every transfer', async (t) => {
  const { node, sink, watcher, signal } = await setup(t, { confirmations: 1, options: { batch_size: 2 } });
  for (let i = 0; i < 7; i++) node.mine([eth(i % 2 ? ALICE : BOB, BigInt(i + 1), `0xt${i}`)]);
  const before = node.requests;
  await watcher.poll(signal);
  t.is((await sink.calls()).length, 7);
  t.is(node.requests - before, 1 + 1 + 4); // tip, the start header, four batches
  t.like(watcher.status(), { scanned_height: 7, lag: 0 });
});

test('a reorganisation of depth 1 reverts the transfer of the dropped block and records the new branch', async (t) => {
  const { node, sink, watcher, signal, transfers, logs } = await setup(t, { confirmations: 3 });
  node.mine([eth(ALICE, 10n, '0xkept')]);
  node.mine([eth(BOB, 20n, '0xlost')]);
  await watcher.poll(signal);
  node.cutBackTo(2);
  node.mine([eth(ALICE, 30n, '0xnew')], 'b');
  node.mine([], 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xlost'), ['new>seen', 'seen>reverted']);
  t.deepEqual(await sink.of('0xkept'), ['new>seen', 'seen>confirmed']);
  t.deepEqual(await sink.of('0xnew'), ['new>seen']);
  t.deepEqual(
    (await transfers()).map((r) => [r.txid, r.status, r.block_height, r.block_hash]),
    [
      ['0xkept', 'confirmed', 1, '0xa1'],
      ['0xlost', 'reverted', 2, '0xa2'],
      ['0xnew', 'seen', 2, '0xb2'],
    ],
  );
  t.true(logs.some((l) => l.msg === 'chain reorganisation' && (l as unknown as { fork_height: number }).fork_height === 1));
  t.like(watcher.status(), { scanned_height: 3, maintenance: false });
});

test('a deeper reorganisation reverts a confirmed transfer the new branch lacks and keeps one it holds at another height', async (t) => {
  const { node, sink, watcher, signal, transfers } = await setup(t, { confirmations: 2 });
  node.mineEmpty(2);
  node.mine([eth(ALICE, 10n, '0xmoved'), usdt(BOB, 7n, '0xgone', 3)]);
  node.mineEmpty(4);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xgone'), ['new>confirmed']);
  node.cutBackTo(2);
  node.mineEmpty(3, 'b');
  node.mine([eth(ALICE, 10n, '0xmoved')], 'b');
  node.mineEmpty(3, 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xgone'), ['new>confirmed', 'confirmed>reverted']);
  t.deepEqual(await sink.of('0xmoved'), ['new>confirmed']);
  t.like(
    (await transfers()).find((r) => r.txid === '0xmoved'),
    { status: 'confirmed', block_height: 5, block_hash: '0xb5' },
  );
  t.like(watcher.status(), { scanned_height: 8 });
});

test('a reorganisation to a shorter chain reverts what the shorter chain lacks, and a transfer mined again comes back', async (t) => {
  const { node, sink, watcher, signal } = await setup(t, { confirmations: 1 });
  node.mineEmpty(2);
  node.mine([eth(ALICE, 10n, '0xt')]);
  node.mineEmpty(2);
  await watcher.poll(signal);
  node.cutBackTo(3);
  node.mine([], 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt'), ['new>confirmed', 'confirmed>reverted']);
  t.like(watcher.status(), { node_tip: 3, scanned_height: 3 });
  node.mine([eth(ALICE, 10n, '0xt')], 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt'), ['new>confirmed', 'confirmed>reverted', 'reverted>confirmed']);
});

test('a replaced tip block at the same height is a reorganisation too', async (t) => {
  const { node, sink, watcher, signal } = await setup(t);
  node.mine([eth(ALICE, 10n, '0xt')]);
  await watcher.poll(signal);
  node.cutBackTo(1);
  node.mine([], 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt'), ['new>seen', 'seen>reverted']);
});

test("a reorganisation deeper than reorg_max_depth stops the chain's scanning, reverts nothing and puts its coins in maintenance", async (t) => {
  const { node, sink, watcher, signal, transfers, coinsInMaintenance, logs } = await setup(t, { confirmations: 1, options: { reorg_max_depth: 3 } });
  node.mine([eth(ALICE, 10n, '0xt')]);
  node.mineEmpty(5);
  await watcher.poll(signal);
  node.cutBackTo(1);
  node.mineEmpty(7, 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt'), ['new>confirmed']);
  t.like((await transfers())[0], { status: 'confirmed' });
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  const status = watcher.status();
  t.like(status, { scanned_height: 6, maintenance: true });
  t.regex(status.last_error!, /reorganisation deeper than reorg_max_depth \(3\) below scanned height 6: scanning stopped/);
  t.true(logs.some((l) => l.level === 'error' && l.msg === 'chain scanning stopped'));
  const requests = node.requests;
  await watcher.poll(signal);
  t.is(node.requests, requests, 'a stopped chain is not polled again until restart');
});

test("a crash inside a batch's transaction commits nothing of it; after a restart every transfer is recorded once", async (t) => {
  const { node, sink, watcher, restart, signal, store } = await setup(t, { confirmations: 1, options: { batch_size: 2 } });
  node.mine([eth(ALICE, 1n, '0xt1')]);
  node.mine([eth(BOB, 2n, '0xt2')]);
  node.mine([eth(ALICE, 3n, '0xt3')]);
  node.mine([eth(BOB, 4n, '0xt4')]);
  sink.failWhen = (row) => row.txid === '0xt4';
  await watcher.poll(signal);
  t.deepEqual(
    (await sink.calls()).map((c) => c.txid),
    ['0xt1', '0xt2'],
  );
  t.like(await store.read.findOneBy(ChainCursorEntity, { chain_id: 'ethereum' }), { height: 2 });
  t.regex(watcher.status().last_error!, /crash inside the transaction/);
  sink.failWhen = null;
  const again = restart();
  await again.poll(signal);
  await again.poll(signal);
  t.deepEqual(
    (await sink.calls()).map((c) => `${c.txid}:${c.status}`),
    ['0xt1:confirmed', '0xt2:confirmed', '0xt3:confirmed', '0xt4:confirmed'],
  );
  t.like(again.status(), { scanned_height: 4 });
});

test('a restart resumes after the last committed block: nothing is recorded twice, nothing missed', async (t) => {
  const { node, sink, watcher, restart, signal } = await setup(t, { confirmations: 2 });
  node.mine([eth(ALICE, 1n, '0xt1')]);
  await watcher.poll(signal);
  node.mine([eth(BOB, 2n, '0xt2')]);
  node.mineEmpty(2);
  await restart().poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>seen', 'seen>confirmed']);
  t.deepEqual(await sink.of('0xt2'), ['new>confirmed']);
});

test("an unreachable node puts the chain's coins in maintenance; when it is back the core catches up without a gap", async (t) => {
  const { node, sink, watcher, signal, coinsInMaintenance } = await setup(t, { confirmations: 1, chain: { maintenance_after_seconds: 0 } });
  node.mine([eth(ALICE, 1n, '0xt1')]);
  await watcher.poll(signal);
  node.down = 'connect ECONNREFUSED 127.0.0.1:8545';
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  t.like(watcher.status(), { maintenance: true, last_error: 'connect ECONNREFUSED 127.0.0.1:8545', scanned_height: 1 });
  node.down = null;
  node.mine([eth(BOB, 2n, '0xt2')]);
  node.mineEmpty(3);
  node.mine([usdt(ALICE, 3n, '0xt3')]);
  node.down = 'connect ECONNREFUSED 127.0.0.1:8545';
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  node.down = null;
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  t.deepEqual(
    (await sink.calls()).map((c) => c.txid),
    ['0xt1', '0xt2', '0xt3'],
  );
  t.like(watcher.status(), { maintenance: false, scanned_height: 6, lag: 0, last_error: 'connect ECONNREFUSED 127.0.0.1:8545' });
});

test('a node whose tip has not moved for stall_seconds is in maintenance until it moves again', async (t) => {
  const { node, watcher, signal, clock, coinsInMaintenance } = await setup(t, { options: { stall_seconds: 60 } });
  await watcher.poll(signal);
  clock.advance(60_000);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  clock.advance(1_000);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  t.regex(watcher.status().last_error!, /tip has not moved for more than 60 s \(height 0\)/);
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
});

test('a node behind the scanned height on the same chain reverts nothing', async (t) => {
  const { node, sink, watcher, signal } = await setup(t, { confirmations: 1 });
  node.mine([eth(ALICE, 1n, '0xt1')]);
  node.mineEmpty(3);
  await watcher.poll(signal);
  node.cutBackTo(3);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt1'), ['new>confirmed']);
  t.like(watcher.status(), { node_tip: 2, scanned_height: 4, lag: -2, maintenance: false });
});

test("after a reorganisation to a shorter chain, a deeper one is walked back to a fork point checked against what was scanned: the replaced block's transfer is reverted", async (t) => {
  const { node, sink, watcher, signal, transfers, store } = await setup(t, { confirmations: 1, options: { reorg_max_depth: 5 } });
  node.mineEmpty(3);
  node.mine([eth(ALICE, 10n, '0xt')]);
  node.mineEmpty(6);
  await watcher.poll(signal);
  // Headers are kept 5 deep under the cursor: 5..10.
  node.cutBackTo(8);
  node.mine([], 'b');
  await watcher.poll(signal);
  t.like(watcher.status(), { scanned_height: 8, maintenance: false });
  t.deepEqual(
    (await store.read.find(ChainBlockEntity, { order: { height: 'ASC' } })).map((b) => b.hash),
    ['0xa3', '0xa4', '0xa5', '0xa6', '0xa7', '0xb8'],
  );

  // Block 4, which paid, is replaced: the fork is block 3.
  node.cutBackTo(4);
  node.mineEmpty(7, 'c');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt'), ['new>confirmed', 'confirmed>reverted']);
  t.like((await transfers())[0], { status: 'reverted', block_height: 4 });
  t.like(watcher.status(), { scanned_height: 10, maintenance: false, last_error: null });
});

test("a reorganisation reaching a height whose scanned header is not stored stops scanning instead of taking the node's block there as the fork point", async (t) => {
  const { node, sink, watcher, signal, store, coinsInMaintenance } = await setup(t, { confirmations: 1, options: { reorg_max_depth: 5 } });
  node.mineEmpty(6);
  node.mine([eth(ALICE, 10n, '0xt')]);
  node.mineEmpty(3);
  await watcher.poll(signal);
  await store.write((em) => em.delete(ChainBlockEntity, { chain_id: 'ethereum', height: LessThan(8) }));
  node.cutBackTo(7);
  node.mineEmpty(5, 'b');
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xt'), ['new>confirmed']);
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  t.regex(watcher.status().last_error!, /reaches height 7, whose scanned header is not stored: no fork point can be verified, scanning stopped/);
});

test('a scanner whose cursor another scanner moved records nothing twice, stays out of maintenance and goes on from the stored cursor', async (t) => {
  const { node, sink, watcher, restart, signal, coinsInMaintenance, logs } = await setup(t, { confirmations: 2 });
  node.mine([eth(ALICE, 1n, '0xt1')]);
  await watcher.poll(signal);
  // A second scanner of the same chain (as a daemon that believes it holds the role) goes ahead.
  node.mine([eth(BOB, 2n, '0xt2')]);
  await restart().poll(signal);
  node.mine([eth(ALICE, 3n, '0xt3')]);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  t.true(logs.some((l) => l.msg === 'chain cursor moved by another daemon; reloading it'));
  await watcher.poll(signal);
  t.like(watcher.status(), { scanned_height: 3, maintenance: false, last_error: null });
  t.deepEqual(await sink.of('0xt1'), ['new>seen', 'seen>confirmed']);
  t.deepEqual(await sink.of('0xt2'), ['new>seen', 'seen>confirmed']);
  t.deepEqual(await sink.of('0xt3'), ['new>seen']);
});
