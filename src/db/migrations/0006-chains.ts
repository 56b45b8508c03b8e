import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { col } from './table-helpers';

/** The chain core's state: a scan cursor per chain and the recent block headers reorganisations are checked against. */
export class Chains1767225600006 implements MigrationInterface {
  name = 'Chains1767225600006';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'chain_cursors',
        columns: [{ ...col.str('chain_id', 32), isPrimary: true }, col.int('height'), col.str('hash', 128, true), col.time('updated_at')],
      }),
    );
    await q.createTable(
      new Table({
        name: 'chain_blocks',
        columns: [
          { ...col.str('chain_id', 32), isPrimary: true },
          { ...col.int('height'), isPrimary: true },
          col.str('hash', 128),
          col.str('parent_hash', 128),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['chain_blocks', 'chain_cursors']) await q.dropTable(t);
  }
}
