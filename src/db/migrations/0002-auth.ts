import { MigrationInterface, QueryRunner, Table, TableForeignKey, TableIndex } from 'typeorm';
import { col } from './table-helpers';

export class Auth1767225600002 implements MigrationInterface {
  name = 'Auth1767225600002';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('key_id', 40),
          col.str('name', 200),
          col.str('network', 16),
          col.str('permissions', 200),
          col.str('withdraw_status', 16),
          col.ref('withdraw_granted_by', true),
          col.text('withdraw_request', true),
          col.text('ip_whitelist'),
          col.int('rate_limit_per_minute'),
          col.str('status', 16),
          col.text('secret_sealed'),
          col.str('secret_last4', 4),
          col.ref('secret_holder'),
          col.int('secret_generation'),
          col.bool('rotation_required'),
          col.text('previous_secret_sealed', true),
          col.ref('previous_secret_holder', true),
          col.time('previous_secret_valid_until', true),
          col.ref('created_by'),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        foreignKeys: [new TableForeignKey({ columnNames: ['account_id'], referencedTableName: 'accounts', referencedColumnNames: ['id'] })],
        indices: [
          new TableIndex({ name: 'api_keys_key_id', columnNames: ['key_id'], isUnique: true }),
          new TableIndex({ name: 'api_keys_account', columnNames: ['account_id', 'created_at'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          { ...col.str('scope', 80), isPrimary: true },
          { ...col.str('key', 128), isPrimary: true },
          col.str('fingerprint', 64),
          col.str('state', 16),
          col.int('response_status', true),
          col.text('response_body', true),
          col.time('created_at'),
          col.time('expires_at', true),
        ],
        indices: [new TableIndex({ name: 'idempotency_expiry', columnNames: ['expires_at'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'replay_signatures',
        columns: [{ ...col.str('signature', 64), isPrimary: true }, col.time('expires_at')],
        indices: [new TableIndex({ name: 'replay_expiry', columnNames: ['expires_at'] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['replay_signatures', 'idempotency_keys', 'api_keys']) await q.dropTable(t);
  }
}
