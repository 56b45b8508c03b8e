/**
 * A bcoin start whose port, found free, is taken before bcoin binds it (a busy test run starts many
 * listeners at once): bcoin exits with EADDRINUSE and the start tries a new port, a bounded number
 * of times.
 */
import test from 'ava';
import net from 'node:net';
import { BcoinNode } from '../../../../src/dev/bcoin-node';
import { freePort } from '../../../../src/dev/ports';

/** A listener on 127.0.0.1 holding a port for the test. */
async function holdPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('a port taken before bcoin binds it: the start tries another and the node answers there', async (t) => {
  const held = await holdPort();
  t.teardown(held.close);
  const handed: number[] = [];
  const node = await BcoinNode.start({
    pickPort: async () => {
      const port = handed.length === 0 ? held.port : await freePort();
      handed.push(port);
      return port;
    },
  });
  t.teardown(() => node.kill());
  t.is(handed.length, 2);
  t.is(handed[0], held.port);
  t.is(node.port, handed[1]);
  t.true((await node.height()) >= 0);
});

test('a port taken at every try: the start fails after a few, naming EADDRINUSE', async (t) => {
  const held = await holdPort();
  t.teardown(held.close);
  let tries = 0;
  const err = await t.throwsAsync(
    BcoinNode.start({
      pickPort: async () => {
        tries++;
        return held.port;
      },
    }),
  );
  t.regex(err!.message, /EADDRINUSE/);
  t.is(tries, 4);
});
