import { randomBytes } from 'node:crypto';
import test from 'ava';
import { BlockWait } from '../../../../src/chains/btc/block-wait';
import { createLogger, silentLogger } from '../../../../src/shared/logger';
import { killAllBcoins, startBcoin } from '../../../helpers/bcoin';
import { startTestDaemon, type TestDaemon } from '../../../helpers/daemon';
import { FakeCoreWait } from '../../../helpers/fake-core-wait';
import { btcChain, until } from './btc-fixture';

/**
 * Bitcoin's new blocks through Core's long poll `waitfornewblock` (chains/btc/block-wait.ts): a
 * fake answering it as Core does, in front of bcoin (which has no such method), wakes the scanner;
 * what it says is only a hint; bcoin itself answers method not found and the chain is polled only.
 */

test.after.always(killAllBcoins);

/** Far longer than any test here: a block scanned within seconds was scanned because of a wake. */
const LONG_POLL = { poll_interval_ms: 600_000 };

const status = (td: TestDaemon) => td.daemon.chains.status()[0]!;

async function scannedWithin(td: TestDaemon, height: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if ((status(td).scanned_height ?? -1) >= height) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

async function setup(t: { teardown(fn: () => unknown): void }, watch: Record<string, unknown>) {
  const node = await startBcoin();
  const fake = await FakeCoreWait.start(node.rpcUrl);
  t.teardown(() => fake.stop());
  const td = await startTestDaemon({ chains: [btcChain(node, watch, fake)] });
  t.teardown(() => td.stop());
  await until(() => status(td).scanned_height === status(td).node_tip && status(td).node_tip !== null, 'the first scan', 20_000);
  return { node, fake, td };
}

test('a new block told by the long poll wakes the scanner at once; without the answer it waits for the poll', async (t) => {
  const { node, fake, td } = await setup(t, LONG_POLL);
  await until(() => fake.waiting === 1, 'the daemon waiting for a new block', 5000);
  await node.mine(1);
  const height = await node.height();
  // Not told yet: the poll is minutes away.
  t.false(await scannedWithin(td, height, 800), 'scanned without a wake: the test would not tell');
  const at = Date.now();
  await fake.announce();
  t.true(await scannedWithin(td, height, 3000));
  t.log(`scanned ${Date.now() - at} ms after the long poll answered`);
  // The daemon waits again, one call at a time.
  await until(() => fake.waiting === 1, 'the next wait', 3000);
  t.is(fake.waiting, 1);
});

test('a tip the long poll names and the node does not serve wakes a poll that records nothing beyond the node', async (t) => {
  const { node, fake, td } = await setup(t, LONG_POLL);
  await until(() => fake.waiting === 1, 'the daemon waiting for a new block', 5000);
  const tip = await node.height();
  const polledBefore = status(td).last_poll_at;
  await new Promise((r) => setTimeout(r, 5));
  await fake.announce({ hash: randomBytes(32).toString('hex'), height: tip + 50 });
  await until(() => status(td).last_poll_at !== polledBefore, 'the woken poll', 5000);
  t.is(status(td).scanned_height, tip, "the node's tip, nothing beyond what it serves");
  t.is(status(td).node_tip, tip);
  t.false(status(td).maintenance);
  t.is(status(td).last_error, null);
  // A block the node does have, named with a hash of the liar's: the poll reads the node's.
  await until(() => fake.waiting === 1, 'the next wait', 3000);
  await node.mine(1);
  await fake.announce({ hash: randomBytes(32).toString('hex'), height: tip + 1 });
  t.true(await scannedWithin(td, tip + 1, 3000));
  t.is(status(td).scanned_height, tip + 1);
});

test('bcoin answers waitfornewblock with method not found: asked once, the chain is polled as before', async (t) => {
  const node = await startBcoin();
  const fake = await FakeCoreWait.start(node.rpcUrl);
  t.teardown(() => fake.stop());
  fake.passThrough = true;
  const td = await startTestDaemon({ chains: [btcChain(node, { poll_interval_ms: 100 }, fake)] });
  t.teardown(() => td.stop());
  await until(() => fake.waits >= 1, 'the daemon asking once', 10_000);
  await node.mine(1);
  const height = await node.height();
  t.true(await scannedWithin(td, height, 5000), 'polled');
  await new Promise((r) => setTimeout(r, 500));
  t.is(fake.waits, 1, 'asked again after method not found');
  t.false(status(td).maintenance);
  t.is(status(td).last_error, null);
});

test('BlockWait against bcoin itself: method not found ends it, nothing told; options.wait_for_blocks false never asks', async (t) => {
  const node = await startBcoin();
  const wait = new BlockWait(node.rpcUrl, 5000, silentLogger, { waitMs: 1000, minMs: 10, maxMs: 100 });
  t.teardown(() => wait.stop());
  const told: unknown[] = [];
  wait.start((h) => told.push(h));
  await until(() => wait.counts.unsupported, 'method not found', 5000);
  t.deepEqual(told, []);
  t.is(wait.counts.answers, 0);

  const fake = await FakeCoreWait.start(node.rpcUrl);
  t.teardown(() => fake.stop());
  const td = await startTestDaemon({ chains: [btcChain(node, { poll_interval_ms: 100, wait_for_blocks: false }, fake)] });
  t.teardown(() => td.stop());
  await node.mine(1);
  t.true(await scannedWithin(td, await node.height(), 5000));
  t.is(fake.waits, 0);
});

test('a long poll that fails is tried again after a pause that grows; the unchanged tip at a timeout is not told again', async (t) => {
  const node = await startBcoin();
  const fake = await FakeCoreWait.start(node.rpcUrl);
  t.teardown(() => fake.stop());
  const via = (port: number) => {
    const u = new URL(node.rpcUrl);
    u.port = String(port);
    return u.toString();
  };
  // A port nothing listens on: each call fails at once.
  const closed = await FakeCoreWait.start(node.rpcUrl);
  const deadPort = closed.port;
  await closed.stop();
  const failedAt: number[] = [];
  const log = createLogger({ write: (line) => line.includes('waiting for new blocks failed') && failedAt.push(Date.now()) });
  const dead = new BlockWait(via(deadPort), 2000, log, { waitMs: 1000, minMs: 40, maxMs: 640 });
  t.teardown(() => dead.stop());
  dead.start(() => undefined);
  await until(() => failedAt.length >= 5, 'five failed calls', 30_000);
  const gaps = failedAt.slice(1, 5).map((at, i) => at - failedAt[i]!);
  // Pauses drawn in [base/2, base] for bases 40, 80, 160, 320 ms (a call's own time comes on top); without a pause, a few ms each.
  // (Lower bounds only: a loaded machine may stretch any pause, never shorten one.)
  t.true(gaps[2]! >= 80 && gaps[3]! >= 160, `gaps ${gaps.join(', ')} ms`);
  t.false(dead.counts.unsupported);

  const live = new BlockWait(via(fake.port), 2000, silentLogger, { waitMs: 300, minMs: 40, maxMs: 640 });
  t.teardown(() => live.stop());
  const told: unknown[] = [];
  live.start((h) => told.push(h));
  // Core answers the unchanged tip at each timeout: told once (the first answer), not at every timeout.
  await until(() => live.counts.answers >= 3, 'three answers', 5000);
  t.is(told.length, 1);
  await node.mine(1);
  await fake.announce();
  await until(() => told.length === 2, 'the new block told', 3000);
  t.is((told[1] as { height: number }).height, await node.height());
});
