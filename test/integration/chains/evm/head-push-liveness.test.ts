import test from 'ava';
import { HeadPush, type PushedHead } from '../../../../src/chains/evm/head-push';
import { AnvilNode } from '../../../../src/dev/anvil-node';
import { silentLogger } from '../../../../src/shared/logger';
import { FakeHeads, FreezingProxy } from '../../../helpers/fake-ws-heads';

/**
 * HeadPush's own connection keeping (the daemon-level tests are head-push.test.ts): backoff between
 * reconnects, a connection that dies without closing (no pong), a subscription that goes silent
 * behind live pongs. Short timings are passed in; the daemon runs with the defaults.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(5);
  }
}

function listen(push: HeadPush): Array<PushedHead | null> {
  const got: Array<PushedHead | null> = [];
  push.start((h) => got.push(h));
  return got;
}

test('an endpoint that drops every connection is tried again with a pause that doubles; a head resets it', async (t) => {
  const fake = await FakeHeads.start();
  t.teardown(() => fake.stop());
  fake.dropAfterSubscribe = true;
  const push = new HeadPush(fake.url, silentLogger, { minMs: 40, maxMs: 640 });
  t.teardown(() => push.stop());
  const got = listen(push);
  await until('six connections', () => fake.connectedAt.length >= 6, 10_000);
  const gaps = fake.connectedAt.slice(1, 6).map((at, i) => at - fake.connectedAt[i]!);
  // Pauses drawn in [base/2, base] for bases 40, 80, 160, 320, 640 ms: each pair of steps at least doubles.
  // (Lower bounds only: a loaded machine may stretch any pause, never shorten one.)
  t.true(gaps[2]! >= 80, `pauses ${gaps.join(', ')} ms`);
  t.true(gaps[3]! >= 160, `pauses ${gaps.join(', ')} ms`);
  t.true(gaps[4]! >= 320, `pauses ${gaps.join(', ')} ms`);
  // Each subscription wakes the scanner once (heads may have been missed).
  t.true(got.length >= 4 && got.every((h) => h === null));

  // A connection that holds and pushes a head: the next drop is retried at the shortest pause again.
  fake.dropAfterSubscribe = false;
  const subs = fake.subscriptions;
  await until('a connection that holds', () => fake.subscriptions > subs && push.connected, 10_000);
  fake.push(7, '0x' + '11'.repeat(32));
  await until('the head', () => got.some((h) => h?.height === 7));
  const before = fake.connectedAt.length;
  const cutAt = Date.now();
  fake.dropAll();
  await until('connected again', () => fake.connectedAt.length > before, 3000);
  // The shortest pause (20–40 ms), not the 320–640 ms the failures before would have led to.
  t.true(fake.connectedAt[before]! - cutAt < 250, `reconnected after ${fake.connectedAt[before]! - cutAt} ms`);
});

test('a connection that stays open but answers nothing (not even a ping) is dropped and made anew; heads come again', async (t) => {
  const node = await AnvilNode.start();
  t.teardown(() => node.kill());
  const proxy = new FreezingProxy(node.port);
  await proxy.open();
  t.teardown(() => proxy.close());
  const push = new HeadPush(proxy.url, silentLogger, { minMs: 20, maxMs: 200, pingEveryMs: 200, silentAfterMs: 60_000 });
  t.teardown(() => push.stop());
  const got = listen(push);
  await until('connected', () => push.connected && push.counts.connects === 1);
  const tip = await node.blockNumber();
  await node.mine(1);
  await until('a head pushed', () => got.some((h) => h !== null && h.height > tip));
  // An idle but live connection is pinged and kept (anvil answers pings).
  await sleep(700);
  t.is(push.counts.dropped, 0, 'a live idle connection was dropped');
  t.is(push.counts.connects, 1);

  proxy.freeze();
  const frozenAt = Date.now();
  await node.mine(1);
  // Nothing comes over the frozen connection; within two ping periods (and some slack) it is found dead.
  await until('dropped as dead', () => push.counts.dropped === 1, 3000);
  const took = Date.now() - frozenAt;
  t.true(took >= 200, `dropped after ${took} ms`);
  await until('a new subscription', () => push.counts.connects === 2 && got.filter((h) => h === null).length === 2, 3000);
  const seen = got.length;
  const now = await node.blockNumber();
  await node.mine(1);
  await until('heads pushed again', () => got.slice(seen).some((h) => h !== null && h.height === now + 1), 3000);
});

test('a subscription silent behind live pongs is made anew once a polled head is not pushed in time', async (t) => {
  const fake = await FakeHeads.start();
  t.teardown(() => fake.stop());
  // Pongs every second keep the connection alive throughout (a loaded machine must not miss one: a 100 ms pong was, in a full run at load 8).
  const push = new HeadPush(fake.url, silentLogger, { minMs: 20, maxMs: 200, pingEveryMs: 1000, silentAfterMs: 3000 });
  t.teardown(() => push.stop());
  const got = listen(push);
  await until('subscribed', () => fake.subscriptions >= 1);
  fake.push(10, '0x' + 'aa'.repeat(32));
  await until('head 10', () => got.some((h) => h?.height === 10));
  // The poll reads heads the push announced (or lower): nothing to doubt.
  push.polledTip(10);
  push.polledTip(9);
  // The poll reads 11 and the push announces it within the deadline: kept.
  push.polledTip(11);
  await sleep(150);
  fake.push(11, '0x' + 'bb'.repeat(32));
  await sleep(3500);
  t.is(push.counts.dropped, 0, 'a push in time was taken for silence');
  t.is(fake.subscriptions, 1);
  // The poll reads 12, the push never says it (pongs still come): the subscription is made anew.
  push.polledTip(12);
  const at = Date.now();
  await until('subscribed anew', () => fake.subscriptions >= 2, 8000);
  const took = Date.now() - at;
  t.is(push.counts.dropped, 1);
  t.true(took >= 3000, `made anew after ${took} ms`);
  await until('woken on the new subscription', () => got.filter((h) => h === null).length === 2);
});

test('a quiet chain is no silence: the tip polled when the subscription was made is not waited for', async (t) => {
  const fake = await FakeHeads.start();
  t.teardown(() => fake.stop());
  // Pings 2 s apart (the watchdog looks every second): this test is about polled tips, and a loaded machine must not miss a 100 ms pong.
  const push = new HeadPush(fake.url, silentLogger, { minMs: 20, maxMs: 200, pingEveryMs: 2000, silentAfterMs: 500 });
  t.teardown(() => push.stop());
  push.polledTip(40);
  listen(push);
  await until('subscribed', () => fake.subscriptions >= 1);
  // No block comes: the poll keeps reading 40 (and the node pushes nothing, rightly).
  for (let i = 0; i < 8; i++) {
    push.polledTip(40);
    await sleep(150);
  }
  t.is(push.counts.dropped, 0, 'a quiet chain was taken for a silent subscription');
  t.is(fake.subscriptions, 1);
  // A new block the push does not announce is silence.
  push.polledTip(41);
  await until('subscribed anew', () => fake.subscriptions >= 2, 8000);
  t.is(push.counts.dropped, 1);
  // The new subscription starts from 41: polling 41 again is no silence.
  for (let i = 0; i < 6; i++) {
    push.polledTip(41);
    await sleep(150);
  }
  t.is(push.counts.dropped, 1);
});
