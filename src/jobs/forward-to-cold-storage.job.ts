import type { CustodyService } from '../custody/custody.service';
import type { Job } from './scheduler';

/** Forwards each account's excess over its cold-storage `keep` (PRODUCT §18), every `custody.interval_seconds`. */
export function forwardToColdStorageJob(custody: CustodyService, intervalSeconds: number): Job {
  return {
    name: 'forward-to-cold-storage',
    schedule: { everyMs: intervalSeconds * 1000 },
    run: async (signal) => void (await custody.run(signal)),
  };
}
