import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * The payout worker's stored payouts (issue 16 §3), for every chain family: a payout is one
 * transaction paying one or more withdrawals of one account, stored with its signed bytes (sealed)
 * before its first broadcast, with every replacement it ever had (its candidates). A withdrawal is
 * a leg of at most one payout ever: the primary key of `chain_payout_legs` is the guard that no
 * second transaction is ever signed for it.
 */
export class Payouts1767225600021 implements MigrationInterface {
  name = 'Payouts1767225600021';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'chain_payouts',
        columns: [
          col.id(),
          col.str('chain_id', 32),
          col.ref('account_id'),
          col.ref('coin_id'),
          // signed → broadcast → confirmed (→ broadcast again on a reorganisation); failed.
          col.str('status', 16),
          col.str('reservation', 64),
          col.int('broadcast_height', true),
          col.time('first_broadcast_at', true),
          // 1 once the node was seen holding a candidate (mempool or block).
          col.int('held'),
          col.int('unknown_checks'),
          col.str('confirmed_txid', 128, true),
          col.text('failure_reason', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [new TableIndex({ name: 'chain_payouts_open', columnNames: ['chain_id', 'status'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'chain_payout_candidates',
        columns: [
          { ...col.ref('payout_id'), isPrimary: true },
          { ...col.int('seq'), isPrimary: true },
          col.str('chain_id', 32),
          col.str('txid', 128),
          col.text('raw_sealed'),
          col.str('fee', 80),
          col.text('data'),
          col.time('created_at'),
        ],
      }),
    );
    await q.query('CREATE UNIQUE INDEX chain_payout_candidates_txid ON chain_payout_candidates (chain_id, txid)');
    await q.createTable(
      new Table({
        name: 'chain_payout_legs',
        columns: [{ ...col.ref('withdrawal_id'), isPrimary: true }, col.ref('payout_id'), col.int('output'), col.time('created_at')],
        indices: [new TableIndex({ name: 'chain_payout_legs_payout', columnNames: ['payout_id'] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('chain_payout_legs');
    await q.query('DROP INDEX chain_payout_candidates_txid');
    await q.dropTable('chain_payout_candidates');
    await q.dropTable('chain_payouts');
  }
}
