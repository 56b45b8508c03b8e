import { randomBytes } from 'node:crypto';
import test from 'ava';
import { killAllAnvils } from '../../../helpers/anvil';
import { FakeHeads } from '../../../helpers/fake-ws-heads';
import { TcpGate } from '../../../helpers/tcp-gate';
import { startEvmFixture, type EvmFixture } from './evm-fixture';

/** Far longer than any test here: a block scanned within seconds was scanned because of a push. */
const LONG_POLL = { poll_interval_ms: 600_000 };

test.after.always(() => killAllAnvils());

const status = (f: EvmFixture) => f.td.daemon.chains.status()[0]!;

async function scannedWithin(f: EvmFixture, height: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((status(f).scanned_height ?? -1) >= height) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

/** Returns once no poll has ended for 200 ms (at most 2 s): a poll in flight has finished. */
async function pollsEnded(f: EvmFixture): Promise<void> {
  const deadline = Date.now() + 2000;
  let last = status(f).last_poll_at;
  let since = Date.now();
  while (Date.now() - since < 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    const now = status(f).last_poll_at;
    if (now !== last) [last, since] = [now, Date.now()];
  }
}

/** Mines until a block is scanned within `each` ms of its mining (the push may still be connecting); how long the last one took. */
async function minedAndPushed(f: EvmFixture, each = 2000, tries = 10): Promise<number> {
  for (let i = 0; i < tries; i++) {
    await f.node.mine(1);
    const t0 = Date.now();
    if (await scannedWithin(f, await f.node.blockNumber(), each)) return Date.now() - t0;
  }
  throw new Error(`no mined block was scanned within ${each} ms: ${JSON.stringify(status(f))}`);
}

test('a new head pushed over ws_url wakes the scanner at once, far within the poll interval', async (t) => {
  const chain: Record<string, unknown> = {};
  const f = await startEvmFixture({
    watch: LONG_POLL,
    chain,
    endpoints: (url) => {
      chain.ws_url = url.replace(/^http/, 'ws');
      return [url];
    },
  });
  t.teardown(() => f.stop());
  await minedAndPushed(f);
  // Connected: each block is scanned within moments of its mining.
  for (let i = 0; i < 3; i++) t.true((await minedAndPushed(f, 5000, 1)) < 5000);
  t.false(status(f).maintenance);
});

test('a dropped push connection reconnects with backoff; polling covers the gap', async (t) => {
  const chain: Record<string, unknown> = {};
  let gate: TcpGate | null = null;
  const f = await startEvmFixture({
    watch: LONG_POLL,
    chain,
    endpoints: async (url) => {
      gate = new TcpGate(Number(new URL(url).port));
      await gate.open();
      chain.ws_url = gate.url.replace(/^http/, 'ws');
      return [url];
    },
  });
  t.teardown(async () => {
    await gate!.close();
    await f.stop();
  });
  await minedAndPushed(f);
  // The socket is cut: a block mined now is not pushed (and the poll is minutes away). A poll a
  // push started before the cut may still be reading the tip (over HTTP, not through the gate):
  // it ends first, or it would scan the block mined next (seen in a rehearsal at load 6).
  await gate!.close();
  await pollsEnded(f);
  await f.node.mine(1);
  const missed = await f.node.blockNumber();
  t.false(await scannedWithin(f, missed, 1000));
  await gate!.open();
  // Reconnected by itself: the new subscription wakes a poll that scans the block missed (no new block needed)...
  t.true(await scannedWithin(f, missed, 20_000), 'the block missed while the push was down is scanned on reconnecting');
  // ...and blocks are pushed again.
  await minedAndPushed(f, 3000, 10);
  t.is(status(f).scanned_height, await f.node.blockNumber());
});

test('a pushed head the node does not serve wakes a poll that changes nothing; a true one is scanned', async (t) => {
  const liar = await FakeHeads.start();
  t.teardown(() => liar.stop());
  const f = await startEvmFixture({ watch: LONG_POLL, chain: { ws_url: liar.url } });
  t.teardown(() => f.stop());
  await liar.subscribed();
  // (The start's poll may have read the tip before the node's last setup block: the woken poll catches up to it.)
  const tip = await f.node.blockNumber();
  // The subscription wakes a poll of its own (heads may have been missed): it catches up to the tip first.
  t.true(await scannedWithin(f, tip, 5000));
  await new Promise((r) => setTimeout(r, 300));
  const polledBefore = status(f).last_poll_at;
  // A head far above the node's, with a hash the node never had.
  await new Promise((r) => setTimeout(r, 5));
  liar.push(tip + 50, '0x' + randomBytes(32).toString('hex'));
  const deadline = Date.now() + 5000;
  while (status(f).last_poll_at === polledBefore && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.not(status(f).last_poll_at, polledBefore, 'the push woke a poll');
  t.true(await scannedWithin(f, tip, 5000));
  t.is(status(f).scanned_height, tip, "the node's tip, nothing beyond what it serves");
  t.false(status(f).maintenance);
  t.is(status(f).last_error, null);
  // A block the node does have, announced (with the liar's own hash): the poll reads the node's.
  await f.node.mine(1);
  liar.push(tip + 1, '0x' + randomBytes(32).toString('hex'));
  t.true(await scannedWithin(f, tip + 1, 5000));
  t.is(status(f).scanned_height, tip + 1);
});
