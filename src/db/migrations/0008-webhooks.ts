import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/** Webhook endpoints, deliveries with their schedule, attempts, and the accounts' invoice-callback secrets. */
export class Webhooks1767225600008 implements MigrationInterface {
  name = 'Webhooks1767225600008';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'webhook_endpoints',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.text('url'),
          col.text('event_types'),
          col.text('description', true),
          col.bool('enabled'),
          col.text('secret_sealed'),
          col.str('secret_last4', 8),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [new TableIndex({ name: 'webhook_endpoints_account', columnNames: ['account_id', 'created_at', 'id'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.ref('event_id'),
          col.str('event_type', 48),
          col.ref('endpoint_id', true),
          col.text('url'),
          col.str('status', 16),
          col.int('attempts'),
          col.int('schedule_attempts'),
          col.time('next_attempt_at', true),
          col.int('last_response_status', true),
          col.text('last_error', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'webhook_deliveries_due', columnNames: ['next_attempt_at'] }),
          new TableIndex({ name: 'webhook_deliveries_account', columnNames: ['account_id', 'created_at', 'id'] }),
          new TableIndex({ name: 'webhook_deliveries_event', columnNames: ['event_id'] }),
          new TableIndex({ name: 'webhook_deliveries_endpoint_due', columnNames: ['endpoint_id', 'next_attempt_at'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'webhook_attempts',
        columns: [
          col.id(),
          col.ref('delivery_id'),
          col.int('number'),
          col.text('url'),
          col.time('started_at'),
          col.time('finished_at', true),
          col.int('response_status', true),
          col.text('error', true),
          col.int('duration_ms', true),
        ],
        indices: [
          new TableIndex({ name: 'webhook_attempts_delivery', columnNames: ['delivery_id', 'number'] }),
          new TableIndex({ name: 'webhook_attempts_unfinished', columnNames: ['finished_at'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'webhook_callback_secrets',
        columns: [
          { ...col.ref('account_id'), isPrimary: true },
          col.text('secret_sealed'),
          col.str('secret_last4', 8),
          col.time('created_at'),
          col.time('updated_at'),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['webhook_callback_secrets', 'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints']) await q.dropTable(t);
  }
}
