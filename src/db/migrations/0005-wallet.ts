import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * The wallet: each account's branch, the address counters, and a unique (chain, derivation path)
 * on addresses so the database itself refuses an index handed out twice.
 */
export class Wallet1767225600005 implements MigrationInterface {
  name = 'Wallet1767225600005';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'wallet_branches',
        columns: [{ ...col.ref('account_id'), isPrimary: true }, col.int('branch'), col.time('created_at')],
        indices: [new TableIndex({ name: 'wallet_branches_branch', columnNames: ['branch'], isUnique: true })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'wallet_counters',
        columns: [{ ...col.str('name', 100), isPrimary: true }, col.int('next_value')],
      }),
    );
    await q.createIndex('addresses', new TableIndex({ name: 'addresses_chain_path', columnNames: ['chain_id', 'derivation_path'], isUnique: true }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('addresses', 'addresses_chain_path');
    for (const t of ['wallet_counters', 'wallet_branches']) await q.dropTable(t);
  }
}
