import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/** The money tables: the ledger (journal and cached balances), invoices and transactions. */
export class Money1767225600004 implements MigrationInterface {
  name = 'Money1767225600004';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'ledger_entries',
        columns: [
          { name: 'seq', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          col.ref('id'),
          col.ref('coin_id'),
          col.str('debit_book', 64),
          col.str('credit_book', 64),
          col.str('amount', 80),
          col.str('kind', 16),
          col.ref('pending_id', true),
          col.ref('reverses_id', true),
          col.str('code', 32),
          col.ref('ref_id', true),
          col.time('created_at'),
        ],
        indices: [
          new TableIndex({ name: 'ledger_entries_id', columnNames: ['id'], isUnique: true }),
          // A hold is settled (posted or voided) once; an entry is reversed once.
          new TableIndex({ name: 'ledger_entries_pending', columnNames: ['pending_id'], isUnique: true }),
          new TableIndex({ name: 'ledger_entries_reverses', columnNames: ['reverses_id'], isUnique: true }),
          new TableIndex({ name: 'ledger_entries_ref', columnNames: ['ref_id'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'ledger_balances',
        columns: [
          { ...col.str('book', 64), isPrimary: true },
          { ...col.ref('coin_id'), isPrimary: true },
          col.str('debits_posted', 80),
          col.str('credits_posted', 80),
          col.str('debits_pending', 80),
          col.str('credits_pending', 80),
          col.time('updated_at'),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'invoices',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('status', 16),
          col.str('currency', 16),
          col.str('amount', 80),
          col.ref('coin_id', true),
          col.ref('address_id', true),
          col.str('address', 128, true),
          col.str('amount_crypto', 80, true),
          col.str('payer_amount', 80, true),
          col.str('paid_amount', 80),
          col.str('remaining_amount', 80),
          col.str('overpaid_amount', 80),
          col.str('amount_fiat', 80, true),
          col.str('fiat_currency', 8, true),
          col.str('rate_locked', 80, true),
          col.time('rate_locked_at', true),
          col.bool('late_payment'),
          col.str('fee_paid_by', 16),
          col.str('fee_percent', 40, true),
          col.str('tolerance_percent', 40),
          col.str('order_id', 128, true),
          col.bool('idempotency_by_order_id'),
          col.text('description', true),
          col.text('return_url', true),
          col.text('webhook_url', true),
          col.text('metadata', true),
          col.text('allowed_coin_ids', true),
          col.time('ttl_expires_at'),
          col.time('expired_at', true),
          col.time('cancelled_at', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'invoices_account_time', columnNames: ['account_id', 'created_at', 'id'] }),
          new TableIndex({ name: 'invoices_account_order', columnNames: ['account_id', 'order_id'] }),
          new TableIndex({ name: 'invoices_status_ttl', columnNames: ['status', 'ttl_expires_at'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'transactions',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('type', 16),
          col.str('status', 16),
          col.ref('coin_id'),
          col.str('amount', 80),
          col.str('fee', 80, true),
          col.str('net_amount', 80, true),
          col.str('txid', 128, true),
          col.ref('chain_transfer_id', true),
          col.ref('invoice_id', true),
          col.ref('address_id', true),
          col.ref('withdrawal_id', true),
          col.ref('reverses_id', true),
          col.time('created_at'),
          col.time('confirmed_at', true),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'transactions_account_time', columnNames: ['account_id', 'created_at', 'id'] }),
          new TableIndex({ name: 'transactions_transfer', columnNames: ['chain_transfer_id'] }),
          new TableIndex({ name: 'transactions_invoice', columnNames: ['invoice_id'] }),
          new TableIndex({ name: 'transactions_address', columnNames: ['address_id'] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['transactions', 'invoices', 'ledger_balances', 'ledger_entries']) await q.dropTable(t);
  }
}
