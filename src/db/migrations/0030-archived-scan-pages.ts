import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The slow scan reads a chain's archived addresses a page at a time, in address-id order, and asks
 * the node for one page's balances while it reads the next (`npm run bench addresses`): its chain
 * index is `(chain_id, address_id)`, which serves the pages and still every read by chain alone.
 */
export class ArchivedScanPages1767225600030 implements MigrationInterface {
  name = 'ArchivedScanPages1767225600030';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX archived_scans_chain');
    await q.query('CREATE INDEX archived_scans_chain ON archived_scans (chain_id, address_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX archived_scans_chain');
    await q.query('CREATE INDEX archived_scans_chain ON archived_scans (chain_id)');
  }
}
