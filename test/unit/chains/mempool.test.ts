import test from 'ava';
import type { NormalisedTransfer } from '../../../src/chains/types';
import { FakeChain } from './fake-chain';
import { ALICE, BOB, eth, setup, STRANGER } from './watcher-harness';

/** A fake node with a mempool, as a Bitcoin node has: tests put transfers in and take them out. */
class FakeMempoolChain extends FakeChain {
  waiting: NormalisedTransfer[] = [];

  async mempool(): Promise<NormalisedTransfer[]> {
    return this.waiting.map((t) => ({ ...t }));
  }

  /** Mines the waiting transfers into a block, as a miner would. */
  mineWaiting(): void {
    this.mine(this.waiting);
    this.waiting = [];
  }
}

const withMempool = (t: Parameters<typeof setup>[0], confirmations = 2) => setup(t, { confirmations, node: new FakeMempoolChain() });

test('a transfer in the mempool is seen without a block, then follows its block to confirmed', async (t) => {
  const { node, sink, watcher, signal, transfers } = await withMempool(t);
  node.waiting = [eth(ALICE, 7n, '0xm1')];
  await watcher.poll(signal);
  t.like((await transfers())[0], { status: 'seen', block_height: null, confirmations: 0 });
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xm1'), ['new>seen']);
  node.mineWaiting();
  await watcher.poll(signal);
  t.like((await transfers())[0], { status: 'seen', block_height: 1, confirmations: 1 });
  node.mineEmpty(1);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xm1'), ['new>seen', 'seen>confirmed']);
});

test('a transfer that leaves the mempool without a block is reverted; seen again if it comes back', async (t) => {
  const { node, sink, watcher, signal, transfers, logs } = await withMempool(t);
  node.waiting = [eth(ALICE, 7n, '0xgone'), eth(BOB, 3n, '0xstays'), eth(STRANGER, 1n, '0xother')];
  await watcher.poll(signal);
  node.waiting = node.waiting.slice(1);
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xgone'), ['new>seen', 'seen>reverted']);
  t.deepEqual(await sink.of('0xstays'), ['new>seen']);
  t.deepEqual(await sink.of('0xother'), []);
  t.like(
    (await transfers()).find((r) => r.txid === '0xgone'),
    { status: 'reverted', block_height: null },
  );
  t.true(logs.some((l) => l.msg === 'transfers left the mempool unconfirmed'));
  node.waiting.push(eth(ALICE, 7n, '0xgone'));
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xgone'), ['new>seen', 'seen>reverted', 'reverted>seen']);
});

test('a mined transfer no longer in the mempool is not reverted, and a mempool copy never moves it out of its block', async (t) => {
  const { node, sink, watcher, signal, transfers } = await withMempool(t, 3);
  node.waiting = [eth(ALICE, 7n, '0xm1')];
  await watcher.poll(signal);
  const copy = node.waiting[0]!;
  node.mineWaiting();
  // A node that still lists a transaction it has just mined (read before the tip).
  node.waiting = [copy];
  await watcher.poll(signal);
  node.waiting = [];
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xm1'), ['new>seen']);
  t.like((await transfers())[0], { status: 'seen', block_height: 1 });
});

test('a transfer reorganised out of its block and back in the mempool is seen again', async (t) => {
  const { node, sink, watcher, signal } = await withMempool(t, 3);
  node.mine([eth(ALICE, 7n, '0xr1')]);
  await watcher.poll(signal);
  node.cutBackTo(1);
  node.mineEmpty(2, 'b');
  node.waiting = [eth(ALICE, 7n, '0xr1')];
  await watcher.poll(signal);
  t.deepEqual(await sink.of('0xr1'), ['new>seen', 'seen>reverted', 'reverted>seen']);
});
