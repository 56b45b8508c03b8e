import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * Static addresses (PRODUCT §7): a customer's permanent deposit address of one coin, keyed by the
 * wallet address row it was issued as. At most one active address per (account, coin, customer)
 * is the unique partial index `static_addresses_active`: two creations at once cannot both commit.
 * `idle_since` is the last creation, restore or deposit: the automatic archive reads the active
 * rows by it; `warned_at` says the archive warning of this idle period was sent. The list reads
 * the account's rows newest first; `search` matches a prefix of the address, the customer id or
 * the label, each with its own index per account. A deposit's history is read through the
 * transactions' existing address_id index.
 */
export class StaticAddresses1767225600018 implements MigrationInterface {
  name = 'StaticAddresses1767225600018';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'static_addresses',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('customer_id', 128),
          col.ref('coin_id'),
          col.str('address', 128),
          col.str('label', 200, true),
          col.str('status', 16),
          col.time('archived_at', true),
          col.time('last_deposit_at', true),
          col.time('idle_since'),
          col.time('warned_at', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'static_addresses_account_time', columnNames: ['account_id', 'created_at', 'id'] }),
          new TableIndex({ name: 'static_addresses_account_customer', columnNames: ['account_id', 'customer_id'] }),
          new TableIndex({ name: 'static_addresses_account_address', columnNames: ['account_id', 'address'] }),
          new TableIndex({ name: 'static_addresses_account_label', columnNames: ['account_id', 'label'] }),
          new TableIndex({ name: 'static_addresses_idle', columnNames: ['status', 'idle_since'] }),
        ],
      }),
    );
    await q.query(`CREATE UNIQUE INDEX static_addresses_active ON static_addresses (account_id, coin_id, customer_id) WHERE status = 'active'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('static_addresses');
  }
}
