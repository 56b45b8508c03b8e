import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startPreparedDaemon, testConfig } from '../../helpers/daemon';

/**
 * A start that fails half-way (here the metrics listener's port is taken, after the store, the
 * worker threads, the chain core and the API server are open) closes everything it opened, in
 * reverse order: nothing is left running in the process, and the same data dir starts cleanly.
 */
test('a start that fails after the API server listens leaves nothing open, and the data dir starts again', async (t) => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => void taken.close());
  const port = (taken.address() as net.AddressInfo).port;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-test-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const before = process
    .getActiveResourcesInfo()
    .filter((r) => r !== 'Timeout' && r !== 'Immediate')
    .sort();
  const config = testConfig(dataDir, { metrics: { listen: `127.0.0.1:${port}` } });
  await t.throwsAsync(startPreparedDaemon(config), { message: `cannot listen on 127.0.0.1:${port} (metrics.listen): address already in use` });
  // An Immediate or a Timeout queued by a closing stream is not a handle left open; wait for them to
  // run (bounded), then every other resource must be as before.
  const open = () =>
    process
      .getActiveResourcesInfo()
      .filter((r) => r !== 'Timeout' && r !== 'Immediate')
      .sort();
  const deadline = Date.now() + 2_000;
  while (Date.now() < deadline && JSON.stringify(open()) !== JSON.stringify(before)) await new Promise((resolve) => setTimeout(resolve, 20));
  t.deepEqual(open(), before, 'no server, socket, thread or file handle of the failed start');

  const daemon = await startPreparedDaemon(testConfig(dataDir));
  t.teardown(() => daemon.stop());
  t.regex(daemon.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
});
