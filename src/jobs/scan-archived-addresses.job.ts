import type { ArchivedScan } from '../chains/archived-scan';
import type { Job } from './scheduler';

/** How often the job wakes to see whether a chain's period has passed (at most). */
const WAKE_MS = 60_000;

/**
 * The slow scan of archived static addresses, each chain every `periodMs` (config
 * `static_addresses.archived_scan_hours`). When a chain last ran is the database's, so a daemon
 * restarted more often than the period still checks on time.
 */
export function scanArchivedAddressesJob(scans: readonly ArchivedScan[], periodMs: number): Job {
  return {
    name: 'scan-archived-addresses',
    schedule: { everyMs: Math.min(periodMs, WAKE_MS) },
    run: async (signal) => {
      // One chain's node trouble does not hold back the others; the job fails with the first error.
      const failed: unknown[] = [];
      for (const scan of scans) {
        if (signal.aborted) return;
        await scan.runIfDue(periodMs, signal).catch((err: unknown) => failed.push(err));
      }
      if (failed.length > 0) throw failed[0];
    },
  };
}
