import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The slow scan of archived static addresses reads a round's rows from `archived_scans` alone
 * (`npm run bench addresses`):
 *
 * - `archived_scans.address`: the address text, written with the row (no join with `addresses`
 *   for 100,000 rows a round); filled here for the rows that exist.
 * - its chain index is `chain_id` alone: every round moves every row's `checked_height`, which an
 *   index holding it made a write per row in the index too.
 * - SQLite: the static addresses' trigram index merges two segments of a level (FTS5 `usermerge`,
 *   default 4) when the daemon's upkeep asks it to (StaticAddressService.mergeSearchIndex): fewer
 *   segments for a search to read.
 */
export class ArchivedScanAddressSearchMerge1767225600028 implements MigrationInterface {
  name = 'ArchivedScanAddressSearchMerge1767225600028';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE archived_scans ADD COLUMN address varchar(128)');
    await q.query('UPDATE archived_scans SET address = (SELECT a.address FROM addresses a WHERE a.id = archived_scans.address_id)');
    await q.query('DROP INDEX archived_scans_chain');
    await q.query('CREATE INDEX archived_scans_chain ON archived_scans (chain_id)');
    if (q.connection.options.type !== 'postgres') await q.query(`INSERT INTO static_addresses_search (static_addresses_search, rank) VALUES ('usermerge', 2)`);
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') await q.query(`INSERT INTO static_addresses_search (static_addresses_search, rank) VALUES ('usermerge', 4)`);
    await q.query('DROP INDEX archived_scans_chain');
    await q.query('CREATE INDEX archived_scans_chain ON archived_scans (chain_id, checked_height)');
    await q.query('ALTER TABLE archived_scans DROP COLUMN address');
  }
}
