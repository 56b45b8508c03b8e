/**
 * The chain core over several endpoints (PRODUCT §15): maintenance only after
 * maintenance_after_seconds without a good poll, at once for a node behind, and confirmations
 * counted only up to the height a quorum of endpoints agrees on.
 */
import test from 'ava';
import { NodePool } from '../../../src/chains/node-pool';
import type { BlockRef } from '../../../src/chains/types';
import type { Clock } from '../../../src/shared/clock';
import { FakeChain } from './fake-chain';
import { ALICE, eth, setup } from './watcher-harness';

/** A fake node whose tip carries its block's time: `age` seconds before the clock's now. */
class TimedChain extends FakeChain {
  age = 0;
  constructor(private readonly clock: () => Clock) {
    super();
  }
  override async tip(): Promise<BlockRef> {
    const tip = await super.tip();
    return { ...tip, time: Math.floor(this.clock().now().getTime() / 1000) - this.age };
  }
}

/** `primary` with the chain's endpoints: itself and `others`, as the production adapter is built. */
function withEndpoints<N extends FakeChain>(
  primary: N,
  others: FakeChain[],
  clock: Clock,
  opts: { quorum?: number; staleAfterSeconds?: number | null } = {},
): N {
  const pool = new NodePool(
    [primary, ...others].map((n) => ({ transport: n, reader: n, requestsPerDay: null })),
    {
      quorum: opts.quorum ?? 1,
      staleAfterSeconds: opts.staleAfterSeconds ?? null,
      clock,
      unavailable: (err) => err instanceof Error && /ECONNREFUSED/.test(err.message),
    },
  );
  return Object.assign(primary, { nodes: pool });
}

test('a node failure shorter than maintenance_after_seconds leaves the coins on sale; one that lasts it puts them in maintenance', async (t) => {
  const { node, watcher, signal, clock, coinsInMaintenance } = await setup(t, { chain: { maintenance_after_seconds: 60 } });
  await watcher.poll(signal);
  node.down = 'evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)';
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  t.like(watcher.status(), { maintenance: false, maintenance_reason: null, last_error: 'evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)' });
  clock.advance(59_999);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  clock.advance(1);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), ['ETH', 'USDT']);
  t.like(watcher.status(), { maintenance: true, maintenance_reason: 'evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)' });
  node.down = null;
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
  // The window starts again from the last good poll.
  node.down = 'evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)';
  clock.advance(30_000);
  await watcher.poll(signal);
  t.deepEqual(coinsInMaintenance(), []);
});

test('a node behind (its newest block older than stale_after_seconds) puts the coins in maintenance at once, with the age as the reason', async (t) => {
  let clock: Clock | undefined;
  const node = new TimedChain(() => clock!);
  const h = await setup(t, { node, chain: { maintenance_after_seconds: 600 } });
  clock = h.clock;
  withEndpoints(node, [], h.clock, { staleAfterSeconds: 300 });
  await h.watcher.poll(h.signal);
  t.deepEqual(h.coinsInMaintenance(), []);
  node.age = 14 * 60;
  await h.watcher.poll(h.signal);
  t.deepEqual(h.coinsInMaintenance(), ['ETH', 'USDT']);
  t.like(h.watcher.status(), { maintenance: true, maintenance_reason: 'node behind: newest block 14 min old' });
  node.age = 3;
  node.mineEmpty(1);
  await h.watcher.poll(h.signal);
  t.deepEqual(h.coinsInMaintenance(), []);
});

test('quorum 2 with the other endpoint lying about the block hashes: a payment is seen but no confirmation is counted', async (t) => {
  const liar = new FakeChain();
  const h = await setup(t, { confirmations: 2, chain: { rpc_urls: ['http://127.0.0.1:2'], quorum: 2 } });
  withEndpoints(h.node, [liar], h.clock, { quorum: 2 });
  h.node.mine([eth(ALICE, 1n, '0xpaid')]);
  h.node.mineEmpty(4);
  // The liar holds as many blocks, each with another hash.
  liar.cutBackTo(1);
  liar.mineEmpty(5, 'x');
  await h.watcher.poll(h.signal);
  await h.watcher.poll(h.signal);
  t.deepEqual(await h.sink.of('0xpaid'), ['new>seen']);
  t.like((await h.transfers())[0], { status: 'seen', confirmations: 0 });
});

test('quorum 2 with both endpoints reporting the same hashes: confirmations count as with one', async (t) => {
  const twin = new FakeChain();
  const h = await setup(t, { confirmations: 2, chain: { rpc_urls: ['http://127.0.0.1:2'], quorum: 2 } });
  withEndpoints(h.node, [twin], h.clock, { quorum: 2 });
  h.node.mine([eth(ALICE, 1n, '0xpaid')]);
  h.node.mineEmpty(1);
  // The second endpoint is a block behind at first: the payment has one agreed confirmation.
  twin.mine([eth(ALICE, 1n, '0xpaid')]);
  await h.watcher.poll(h.signal);
  t.deepEqual(await h.sink.of('0xpaid'), ['new>seen']);
  twin.mineEmpty(1);
  await h.watcher.poll(h.signal);
  t.deepEqual(await h.sink.of('0xpaid'), ['new>seen', 'seen>confirmed']);
  t.like((await h.transfers())[0], { status: 'confirmed', confirmations: 2 });
});
