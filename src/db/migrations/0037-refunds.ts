import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { col } from './table-helpers';

/**
 * Refunds (PRODUCT §16): a refund of an invoice's or an incoming transaction's money, a withdrawal
 * underneath once its address is known (`withdrawals.refund_id` links it back). Before that it
 * waits in `awaiting_address` with a hold of its own (`hold_id`, a pending `withdrawal` row of
 * `transactions` linked by `refund_id`) and a payer link whose token is stored hashed (looked up
 * by the hash) and sealed (shown to the merchant again as `refund_url`). Invoices
 * and transactions keep the exact sum of their live refunds (`refunded_amount`); an invoice accepted
 * although underpaid says so in `resolution`. Columns are added with ALTER TABLE ... ADD COLUMN
 * and a default, which neither dialect answers by copying the table.
 */
const INDEXES: ReadonlyArray<{ name: string; unique: boolean; on: string; where?: string }> = [
  { name: 'refunds_merchant_id', unique: true, on: 'refunds (account_id, refund_id)', where: 'refund_id IS NOT NULL' },
  { name: 'refunds_account_time', unique: false, on: 'refunds (account_id, created_at, id)' },
  { name: 'refunds_token', unique: true, on: 'refunds (token_hash)', where: 'token_hash IS NOT NULL' },
  { name: 'refunds_withdrawal', unique: true, on: 'refunds (withdrawal_id)', where: 'withdrawal_id IS NOT NULL' },
  { name: 'refunds_invoice', unique: false, on: 'refunds (invoice_id)', where: 'invoice_id IS NOT NULL' },
  { name: 'refunds_transaction', unique: false, on: 'refunds (transaction_id)', where: 'transaction_id IS NOT NULL' },
  { name: 'refunds_due', unique: false, on: 'refunds (status, expires_at)' },
];

export class Refunds1767225600037 implements MigrationInterface {
  name = 'Refunds1767225600037';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'refunds',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('status', 24),
          col.str('refund_id', 128, true),
          col.ref('invoice_id', true),
          col.ref('transaction_id', true),
          col.ref('coin_id'),
          col.str('amount', 80),
          col.str('to_address', 128, true),
          col.str('token_hash', 64, true),
          col.text('token_sealed', true),
          col.str('network_fee_paid_by', 16),
          col.text('comment', true),
          col.ref('withdrawal_id', true),
          col.str('txid', 128, true),
          col.ref('hold_id', true),
          col.ref('api_key_id'),
          col.text('failure_reason', true),
          col.time('expires_at', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
      }),
    );
    for (const ix of INDEXES) await q.query(`CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX ${ix.name} ON ${ix.on}${ix.where ? ` WHERE ${ix.where}` : ''}`);
    await q.query(`ALTER TABLE invoices ADD COLUMN refunded_amount varchar(80) NOT NULL DEFAULT '0'`);
    await q.query(`ALTER TABLE invoices ADD COLUMN resolution varchar(32)`);
    await q.query(`ALTER TABLE transactions ADD COLUMN refunded_amount varchar(80) NOT NULL DEFAULT '0'`);
    await q.query(`ALTER TABLE transactions ADD COLUMN refund_id varchar(36)`);
    await q.query(`ALTER TABLE withdrawals ADD COLUMN refund_id varchar(36)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('withdrawals', 'refund_id');
    await q.dropColumn('transactions', 'refund_id');
    await q.dropColumn('transactions', 'refunded_amount');
    await q.dropColumn('invoices', 'resolution');
    await q.dropColumn('invoices', 'refunded_amount');
    await q.dropTable('refunds');
  }
}
