import test from 'ava';
import { NodePool, pooledTransport, type PoolMember } from '../../../src/chains/node-pool';
import { NodeFault, NodeStale, NodeUnavailable, type BlockRef, type ChainReader } from '../../../src/chains/types';
import { FakeClock } from '../../../src/shared/clock';

/** One endpoint in memory: its answer, or the trouble it is in; counts what it is asked. */
class FakeEndpoint {
  asked = 0;
  trouble: Error | null = null;
  tipRef: BlockRef = { height: 10, hash: '0xa10' };
  hashes = new Map<number, string>();
  constructor(readonly name: string) {}

  async read(what: string): Promise<string> {
    this.asked++;
    if (this.trouble) throw this.trouble;
    return `${this.name}:${what}`;
  }

  readonly reader: ChainReader = {
    chainId: 'c',
    tip: async () => {
      this.asked++;
      if (this.trouble) throw this.trouble;
      return this.tipRef;
    },
    header: async (height: number) => {
      this.asked++;
      if (this.trouble) throw this.trouble;
      return { height, hash: this.hashes.get(height) ?? `0xa${height}`, parentHash: `0xa${height - 1}` };
    },
    blocks: async () => [],
  };
}

function pool(n: number, opts: { quorum?: number; staleAfterSeconds?: number | null; requestsPerDay?: Array<number | null> } = {}) {
  const clock = new FakeClock('2026-06-01T00:00:00.000Z');
  const nodes = Array.from({ length: n }, (_, i) => new FakeEndpoint(`n${i + 1}`));
  const members: Array<PoolMember<FakeEndpoint>> = nodes.map((node, i) => ({
    transport: node,
    reader: node.reader,
    requestsPerDay: opts.requestsPerDay?.[i] ?? null,
  }));
  const p = new NodePool(members, {
    quorum: opts.quorum ?? 1,
    staleAfterSeconds: opts.staleAfterSeconds ?? null,
    clock,
    unavailable: (err) => err instanceof Error && /ECONNREFUSED|timed out/.test(err.message),
  });
  return { p, nodes, clock, read: pooledTransport(p, ['read']) };
}

const refused = () => new Error('evm node eth_blockNumber: unreachable (ECONNREFUSED)');

test('the first endpoint answers while it is healthy; the others are not asked', async (t) => {
  const { nodes, read } = pool(2);
  t.is(await read.read('a'), 'n1:a');
  t.is(await read.read('b'), 'n1:b');
  t.is(nodes[1]!.asked, 0);
});

test('an endpoint refusing connections is left for the next within the same call, and rests before it is asked first again', async (t) => {
  const { nodes, read, clock } = pool(2);
  nodes[0]!.trouble = refused();
  t.is(await read.read('a'), 'n2:a');
  t.is(nodes[0]!.asked, 1);
  // Resting: the second answers without the first being asked.
  t.is(await read.read('b'), 'n2:b');
  t.is(nodes[0]!.asked, 1);
  // Its pause (1 s after one failure) over, it is asked first again; it answers now.
  nodes[0]!.trouble = null;
  clock.advance(1000);
  t.is(await read.read('c'), 'n1:c');
});

test('the pause of a failing endpoint doubles with each failure in a row', async (t) => {
  const { nodes, read, clock } = pool(2);
  nodes[0]!.trouble = refused();
  await read.read('a');
  clock.advance(1000);
  await read.read('b');
  t.is(nodes[0]!.asked, 2);
  clock.advance(1999);
  await read.read('c');
  t.is(nodes[0]!.asked, 2, 'second pause: 2 s');
  clock.advance(1);
  await read.read('d');
  t.is(nodes[0]!.asked, 3);
});

test('an answer of the node (not a failure to answer) is no reason to ask another endpoint', async (t) => {
  const { nodes, read } = pool(2);
  nodes[0]!.trouble = new Error('evm node eth_call: execution reverted');
  await t.throwsAsync(read.read('a'), { message: 'evm node eth_call: execution reverted' });
  t.is(nodes[1]!.asked, 0);
  nodes[0]!.trouble = new NodeFault('evm node is on chain id 5, the config says 1');
  await t.throwsAsync(read.read('a'), { instanceOf: NodeFault });
  t.is(nodes[1]!.asked, 0);
});

test("every endpoint failing: one endpoint's own error, or one line naming each endpoint (never its URL)", async (t) => {
  const one = pool(1);
  one.nodes[0]!.trouble = refused();
  await t.throwsAsync(one.read.read('a'), { message: 'evm node eth_blockNumber: unreachable (ECONNREFUSED)' });
  // A single endpoint is asked at every call, resting or not: there is no other.
  await t.throwsAsync(one.read.read('a'));
  t.is(one.nodes[0]!.asked, 2);
  const two = pool(2);
  for (const n of two.nodes) n.trouble = refused();
  const err = await t.throwsAsync(two.read.read('a'), { instanceOf: NodeUnavailable });
  t.is(err.message, 'endpoint 1: evm node eth_blockNumber: unreachable (ECONNREFUSED); endpoint 2: evm node eth_blockNumber: unreachable (ECONNREFUSED)');
});

test('a rate-limited endpoint is not asked again before its Retry-After; the next one serves meanwhile', async (t) => {
  const { nodes, read, clock } = pool(2);
  nodes[0]!.trouble = new NodeUnavailable('evm node: HTTP 429', 30_000, true);
  t.is(await read.read('a'), 'n2:a');
  nodes[0]!.trouble = null;
  clock.advance(29_999);
  t.is(await read.read('b'), 'n2:b');
  t.is(nodes[0]!.asked, 1);
  clock.advance(1);
  t.is(await read.read('c'), 'n1:c');
});

test('every endpoint rate limited: the pool answers NodeUnavailable (rate limited, with the wait) without asking any', async (t) => {
  const { nodes, read } = pool(1);
  nodes[0]!.trouble = new NodeUnavailable('evm node: HTTP 429', 5000, true);
  await t.throwsAsync(read.read('a'));
  const err = await t.throwsAsync(read.read('b'), { instanceOf: NodeUnavailable });
  t.true(err.rateLimited);
  t.is(err.retryAfterMs, 5000);
  t.is(err.message, 'the node is rate limited; next try in 5 s');
  t.is(nodes[0]!.asked, 1);
});

test("a tip older than stale_after_seconds makes its endpoint stale: the next one's tip is used", async (t) => {
  const { p, nodes, clock } = pool(2, { staleAfterSeconds: 300 });
  const now = clock.now().getTime() / 1000;
  nodes[0]!.tipRef = { height: 100, hash: '0xold', time: now - 14 * 60 };
  nodes[1]!.tipRef = { height: 130, hash: '0xnew', time: now - 12 };
  t.like(await p.tip(), { height: 130, hash: '0xnew' });
  // Reads go to the fresh endpoint too while the stale one rests.
  t.is(await pooledTransport(p, ['read']).read('x'), 'n2:x');
});

test('every endpoint that answers is behind: NodeStale with the age, as status shows it', async (t) => {
  const { p, nodes, clock } = pool(2, { staleAfterSeconds: 300 });
  const now = clock.now().getTime() / 1000;
  nodes[0]!.tipRef = { height: 100, hash: '0xold', time: now - 14 * 60 };
  nodes[1]!.trouble = refused();
  const err = await t.throwsAsync(p.tip(), { instanceOf: NodeStale });
  t.is(err.message, 'node behind: newest block 14 min old');
});

test("staleness is not judged without a limit (chains mined on demand) or without the block's time", async (t) => {
  const off = pool(1);
  off.nodes[0]!.tipRef = { height: 1, hash: '0x1', time: 0 };
  t.like(await off.p.tip(), { height: 1 });
  const untimed = pool(1, { staleAfterSeconds: 60 });
  t.like(await untimed.p.tip(), { height: 10 });
});

test('quorum 2: a height counts once two endpoints report our hash there; a lying endpoint adds nothing', async (t) => {
  const { p, nodes } = pool(3, { quorum: 2 });
  const ours = async (h: number) => `0xa${h}`;
  nodes[0]!.tipRef = { height: 10, hash: '0xa10' };
  nodes[1]!.tipRef = { height: 10, hash: '0xlie10' };
  nodes[2]!.tipRef = { height: 9, hash: '0xa9' };
  // The first agrees up to 10, the third (one block behind) up to 9, the liar nowhere.
  t.is(await p.agreedHeight(10, ours), 9);
  nodes[2]!.trouble = refused();
  t.is(await p.agreedHeight(10, ours), -1);
});

test('quorum 1 agrees with what was scanned, without asking any endpoint', async (t) => {
  const { p, nodes } = pool(2);
  t.is(await p.agreedHeight(42, async () => undefined), 42);
  t.is(nodes[0]!.asked + nodes[1]!.asked, 0);
});

test('requests_per_day paces polling: after a poll of 3 requests under 100,000 a day the next waits 2.6 s, then the budget refills', async (t) => {
  const { p, read, clock } = pool(1, { requestsPerDay: [100_000] });
  t.is(p.pollDelayMs(1000), 1000);
  for (const w of ['a', 'b', 'c']) await read.read(w);
  t.is(p.pollDelayMs(1000), 2592);
  clock.advance(2592);
  t.is(p.pollDelayMs(1000), 1000);
  // Polling at that pace for a day stays within the budget.
  let requests = 0;
  for (let elapsed = 0; elapsed < 86_400_000;) {
    for (const w of ['a', 'b', 'c']) await read.read(w);
    requests += 3;
    const wait = p.pollDelayMs(1000);
    clock.advance(wait);
    elapsed += wait;
  }
  t.true(requests <= 100_003, `${requests} requests in a day`);
  t.true(requests >= 99_000, `${requests} requests in a day`);
});

test('an endpoint without a budget does not slow polling; one unused does not either', async (t) => {
  const { p, read } = pool(2, { requestsPerDay: [null, 1000] });
  for (let i = 0; i < 50; i++) await read.read('a');
  t.is(p.pollDelayMs(500), 500);
});

test("a stale endpoint's reads go elsewhere after its pause too, until a tip of its own is fresh again", async (t) => {
  const { p, nodes, clock, read } = pool(2, { staleAfterSeconds: 300 });
  const now = () => clock.now().getTime() / 1000;
  nodes[0]!.tipRef = { height: 100, hash: '0xold', time: now() - 900 };
  nodes[1]!.tipRef = { height: 130, hash: '0xnew', time: now() };
  await p.tip();
  clock.advance(10_000);
  t.is(await read.read('x'), 'n2:x');
  nodes[0]!.tipRef = { height: 131, hash: '0xnew2', time: now() };
  t.like(await p.tip(), { height: 131 });
  t.is(await read.read('y'), 'n1:y');
});
