/**
 * The simulator's daemon: bin/coinkeepd's foreground run with what only a test may inject, through
 * DaemonOptions (a production run has none of it): open sensitive-operation limits (the simulator
 * makes many withdrawals), `--crash-at stored|sent` (it kills itself, as kill -9, the first time a
 * payout reaches that checkpoint) and `--plant NAME` (one planted bug, test/sim/planted-bugs.ts).
 * Usage: node sim-daemon.js --config FILE [--crash-at stored|sent] [--plant NAME]
 */
import { loadConfig } from '../../src/config/load';
import { startDaemon } from '../../src/daemon/main';
import type { PayoutCheckpoint } from '../../src/payouts/payout-worker';
import { OPEN_SENSITIVE_LIMITS } from '../helpers/daemon';
import { plantedParts, type PlantName } from './planted-bugs';

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};

const config = arg('--config');
if (!config) throw new Error('--config is required');
const crashAt = arg('--crash-at') as PayoutCheckpoint | undefined;
const plant = arg('--plant') as PlantName | undefined;
void startDaemon(loadConfig(config), {
  pidFile: true,
  sensitiveLimits: OPEN_SENSITIVE_LIMITS,
  payoutCheckpoint: crashAt
    ? (point) => {
        if (point === crashAt) process.kill(process.pid, 'SIGKILL');
      }
    : undefined,
  parts: plant ? plantedParts(plant) : undefined,
});
