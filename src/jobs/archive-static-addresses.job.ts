import type { StaticAddressService } from '../addresses/static-address.service';
import type { Job } from './scheduler';

const DAY_MS = 24 * 3600_000;
/** SPEC "Static address": the archive warning comes 7 days before the automatic archive. */
export const ARCHIVE_WARNING_MS = 7 * DAY_MS;

/** Warns and archives idle static addresses every minute; run at start, it catches up after downtime. */
export function archiveStaticAddressesJob(addresses: StaticAddressService, archiveAfterDays: number): Job {
  return {
    name: 'archive-static-addresses',
    schedule: '*/1 * * * *',
    run: async (signal) => void (await addresses.archiveIdle({ archiveAfterMs: archiveAfterDays * DAY_MS, warnMs: ARCHIVE_WARNING_MS, signal })),
  };
}
