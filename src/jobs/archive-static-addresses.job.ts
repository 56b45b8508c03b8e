import type { StaticAddressService } from '../static-addresses/static-address.service';
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

/** Pages of the search index merged per write (each step holds the write lock briefly). */
export const SEARCH_MERGE_STEP_PAGES = 500;
/** At most this long merging per run; the next run goes on where it stopped. */
const SEARCH_MERGE_BUDGET_MS = 2000;

/** SQLite: keeps the static addresses' search index merged, every minute (StaticAddressService.mergeSearchIndex). */
export function mergeAddressSearchJob(addresses: StaticAddressService): Job {
  return {
    name: 'merge-address-search',
    schedule: '*/1 * * * *',
    run: async (signal) => void (await addresses.mergeSearchIndex({ stepPages: SEARCH_MERGE_STEP_PAGES, budgetMs: SEARCH_MERGE_BUDGET_MS, signal })),
  };
}
