import test from 'ava';
import { rmSync } from 'node:fs';
import { startDaemon } from '../../../src/daemon/main';
import { silentLogger } from '../../../src/shared/logger';
import { startTestDaemon } from '../../helpers/daemon';
import { renderDashboard } from '../../helpers/ink';

test('when the daemon stops the status line says so, and the dashboard reconnects when it is back', async (t) => {
  const td = await startTestDaemon();
  let running = td.daemon;
  t.teardown(async () => {
    await running.stop();
    rmSync(td.dataDir, { recursive: true, force: true });
  });
  const r = await renderDashboard(td.dataDir);
  t.teardown(() => r.unmount());
  await r.waitFor(/live · connected to coinkeepd/);

  await td.daemon.stop();
  const down = await r.waitFor(/daemon not reachable: coinkeepd is not running/);
  t.regex(down.replace(/\s+/g, ' '), /daemon not reachable: coinkeepd is not running \(start it with: coinkeep start\); retrying every second/);
  t.regex(down, /Coinkeep {2}testnet/, 'the last picture stays on screen');

  running = await startDaemon(td.daemon.config, { logger: silentLogger });
  t.regex(await r.waitFor(/reconnected to coinkeepd/), /Chains/);
});
