/**
 * Anvil started quiet (benchmarks): no request log for this process to drain, a port found before
 * it starts, the node usable as any other (the test USDT deployed, blocks mined, a restart on the
 * same port), and a clear error when its port is taken.
 */
import test from 'ava';
import { readlinkSync } from 'node:fs';
import { AnvilNode } from '../../../../src/dev/anvil-node';
import { killAllAnvils, restartAnvil, startAnvil } from '../../../helpers/anvil';

test.after.always(killAllAnvils);

test('a quiet anvil writes its output nowhere, answers on the port found for it, mines, and starts again on that port', async (t) => {
  const { node, usdt } = await startAnvil({ quiet: true });
  t.regex(usdt, /^0x[0-9a-fA-F]{40}$/);
  t.true(node.port > 0);
  for (const fd of [1, 2]) t.is(readlinkSync(`/proc/${node.pid}/fd/${fd}`), '/dev/null');
  const height = await node.blockNumber();
  await node.mine(2);
  t.is(await node.blockNumber(), height + 2);
  await node.stop();
  const again = await restartAnvil(node);
  t.is(again.port, node.port);
  t.true((await again.blockNumber()) >= 0);
});

test('a quiet anvil on a port already taken fails to start, naming the port', async (t) => {
  const { node } = await startAnvil({ quiet: true });
  const err = await t.throwsAsync(AnvilNode.start({ quiet: true, port: node.port }));
  t.true(err!.message.includes(String(node.port)), err!.message);
});
