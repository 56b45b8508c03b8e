import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * Withdrawals (PRODUCT §8) and the permanent binding of their Idempotency-Keys (SPEC "Idempotency"
 * rules 7 to 10). A payout_id names at most one withdrawal per merchant, and a key at most one:
 * both unique indexes are the guards that make parallel copies of one request create one
 * withdrawal. The payout side's columns are here too: the signed transaction as it was handed to
 * the node (public once broadcast), every candidate txid (a replacement adds one), and the worker's
 * claim. The payout-address whitelist an account may enforce (SPEC rule 3) is kept here too: an
 * entry is removed by marking it, so the security log's history keeps meaning. An account may set a
 * daily withdrawal limit (in its default fiat) beyond which payouts wait in review.
 */
export class Withdrawals1767225600016 implements MigrationInterface {
  name = 'Withdrawals1767225600016';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'withdrawals',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.str('status', 24),
          col.str('payout_id', 128, true),
          col.ref('coin_id'),
          col.str('amount', 80),
          col.str('to_address', 128),
          col.text('comment', true),
          col.str('review_reason', 24, true),
          col.str('txid', 128, true),
          col.int('confirmations'),
          col.text('failure_reason', true),
          col.str('platform_fee', 80),
          col.str('network_fee_reserved', 80),
          col.str('network_fee_charged', 80, true),
          col.str('network_fee_mode', 16),
          col.str('total_debit', 80),
          col.ref('api_key_id'),
          col.ref('decided_by', true),
          col.time('decided_at', true),
          col.text('signed_tx', true),
          col.text('candidate_txids'),
          col.str('claimed_by', 64, true),
          col.time('claimed_at', true),
          col.time('created_at'),
          col.time('updated_at'),
          col.time('completed_at', true),
        ],
        indices: [
          new TableIndex({ name: 'withdrawals_account_created', columnNames: ['account_id', 'created_at', 'id'] }),
          new TableIndex({ name: 'withdrawals_status', columnNames: ['status', 'created_at'] }),
        ],
      }),
    );
    await q.query('CREATE UNIQUE INDEX withdrawals_payout_id ON withdrawals (account_id, payout_id) WHERE payout_id IS NOT NULL');
    await q.createTable(
      new Table({
        name: 'withdrawal_keys',
        columns: [{ ...col.ref('account_id'), isPrimary: true }, { ...col.str('key', 128), isPrimary: true }, col.ref('withdrawal_id'), col.time('created_at')],
      }),
    );
    await q.createTable(
      new Table({
        name: 'withdrawal_whitelist',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.ref('coin_id'),
          col.str('address', 128),
          col.str('label', 200, true),
          col.str('status', 16),
          col.str('created_by', 254),
          col.time('created_at'),
          col.time('removed_at', true),
        ],
      }),
    );
    await q.query('ALTER TABLE accounts ADD COLUMN daily_withdrawal_limit varchar(60)');
    await q.query(`CREATE UNIQUE INDEX withdrawal_whitelist_active ON withdrawal_whitelist (account_id, coin_id, address) WHERE status = 'active'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX withdrawal_whitelist_active');
    await q.query('ALTER TABLE accounts DROP COLUMN daily_withdrawal_limit');
    await q.dropTable('withdrawal_whitelist');
    await q.dropTable('withdrawal_keys');
    await q.query('DROP INDEX withdrawals_payout_id');
    await q.dropTable('withdrawals');
  }
}
