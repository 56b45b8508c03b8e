/**
 * The daemon in the foreground, as bin/coinkeepd runs it, that kills itself (SIGKILL, as kill -9)
 * the first time a payout reaches `--crash-at stored` or `sent` (PayoutCheckpoint): the crash
 * tests' daemon. A production run has no such hook: it is injected here, through DaemonOptions.
 * Usage: node crashing-daemon.js --config FILE --crash-at stored|sent
 */
import { loadConfig } from '../../src/config/load';
import { startDaemon } from '../../src/daemon/main';
import type { PayoutCheckpoint } from '../../src/payouts/payout-worker';

const arg = (name: string): string => {
  const at = process.argv.indexOf(name);
  if (at < 0 || at + 1 >= process.argv.length) throw new Error(`${name} is required`);
  return process.argv[at + 1]!;
};

const crashAt = arg('--crash-at') as PayoutCheckpoint;
void startDaemon(loadConfig(arg('--config')), {
  pidFile: true,
  payoutCheckpoint: (point) => {
    if (point === crashAt) process.kill(process.pid, 'SIGKILL');
  },
});
