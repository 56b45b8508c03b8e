import { MigrationInterface, QueryRunner, Table, TableForeignKey, TableIndex } from 'typeorm';
import { col } from './table-helpers';

export class Initial1767225600001 implements MigrationInterface {
  name = 'Initial1767225600001';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(new Table({ name: 'meta', columns: [col.str('key', 64), col.text('value')].map((c, i) => (i === 0 ? { ...c, isPrimary: true } : c)) }));
    await q.createTable(
      new Table({
        name: 'accounts',
        columns: [
          col.id(),
          col.str('name', 200),
          col.str('status', 16),
          col.bool('verified'),
          col.str('platform_fee_percent', 40),
          col.str('default_fiat', 8, true),
          col.int('invoice_ttl_minutes'),
          col.str('underpayment_tolerance_percent', 40),
          col.str('dual_approval_threshold', 60, true),
          col.bool('withdrawal_whitelist_enforced'),
          col.time('created_at'),
          col.time('updated_at'),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'members',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('email', 254),
          col.str('role', 16),
          col.str('status', 16),
          col.text('totp_secret_sealed'),
          col.int('totp_last_step', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        foreignKeys: [new TableForeignKey({ columnNames: ['account_id'], referencedTableName: 'accounts', referencedColumnNames: ['id'] })],
        indices: [new TableIndex({ name: 'members_account_email', columnNames: ['account_id', 'email'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'security_log',
        columns: [col.id(), col.ref('account_id'), col.str('actor', 254), col.str('action', 64), col.text('details'), col.time('created_at')],
        foreignKeys: [new TableForeignKey({ columnNames: ['account_id'], referencedTableName: 'accounts', referencedColumnNames: ['id'] })],
        indices: [new TableIndex({ name: 'security_log_account_time', columnNames: ['account_id', 'created_at', 'id'] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['security_log', 'members', 'accounts', 'meta']) await q.dropTable(t);
  }
}
