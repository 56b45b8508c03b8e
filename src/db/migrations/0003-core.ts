import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/** The tables every chain and domain issue shares: derived addresses, observed chain transfers, the event outbox. */
export class Core1767225600003 implements MigrationInterface {
  name = 'Core1767225600003';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'addresses',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('chain_id', 32),
          col.ref('coin_id'),
          col.str('address', 128),
          col.str('derivation_path', 64),
          col.int('derivation_index'),
          col.str('purpose', 16),
          col.ref('invoice_id', true),
          col.str('status', 16),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [new TableIndex({ name: 'addresses_chain_address', columnNames: ['chain_id', 'address'], isUnique: true })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'chain_transfers',
        columns: [
          col.id(),
          col.str('chain_id', 32),
          col.ref('coin_id'),
          col.str('txid', 128),
          col.int('output_index'),
          col.str('address', 128),
          col.ref('address_id'),
          col.ref('account_id'),
          col.str('amount', 80),
          col.int('block_height', true),
          col.str('block_hash', 128, true),
          col.int('confirmations'),
          col.str('status', 16),
          col.time('seen_at'),
          col.time('confirmed_at', true),
          col.time('reverted_at', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'chain_transfers_key', columnNames: ['chain_id', 'txid', 'coin_id', 'output_index'], isUnique: true }),
          new TableIndex({ name: 'chain_transfers_address', columnNames: ['address_id'] }),
          new TableIndex({ name: 'chain_transfers_open', columnNames: ['chain_id', 'status', 'block_height'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'events',
        columns: [
          { name: 'seq', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          col.ref('id'),
          col.ref('account_id'),
          col.str('type', 48),
          col.ref('object_id', true),
          col.text('callback_url', true),
          col.text('body'),
          col.time('created_at'),
          col.time('dispatched_at', true),
        ],
        indices: [
          new TableIndex({ name: 'events_id', columnNames: ['id'], isUnique: true }),
          new TableIndex({ name: 'events_undispatched', columnNames: ['dispatched_at', 'seq'] }),
          new TableIndex({ name: 'events_account_time', columnNames: ['account_id', 'created_at'] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['events', 'chain_transfers', 'addresses']) await q.dropTable(t);
  }
}
