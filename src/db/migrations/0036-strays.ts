import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * Stray payments (PRODUCT §17): a configured coin that reached an invoice or static address where
 * it was not asked for (another EVM chain than the address's, or another coin than the address's).
 * One row per such transfer (`transfer_id` unique), with its account's decision: `open` until the
 * merchant credits it (`credited`) or refunds it (`refunded`); `reverted` when the chain dropped the
 * transfer (docs/decisions.md).
 */
export class Strays1767225600036 implements MigrationInterface {
  name = 'Strays1767225600036';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'strays',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('chain_id', 32),
          col.ref('coin_id'),
          col.ref('transfer_id'),
          col.str('amount', 80),
          col.str('txid', 128),
          col.str('to_address', 128),
          col.ref('invoice_id', true),
          col.ref('address_id', true),
          col.str('status', 16),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'strays_transfer', columnNames: ['transfer_id'], isUnique: true }),
          new TableIndex({ name: 'strays_account_time', columnNames: ['account_id', 'created_at', 'id'] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('strays');
  }
}
