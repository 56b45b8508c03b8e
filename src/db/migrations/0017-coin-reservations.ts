import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * The Bitcoin coins a stored payout spends, reserved from the moment it is signed until the chain
 * shows them spent (an outgoing chain transfer) or the payout is given up. The primary key is the
 * received output's transfer row: a coin is reserved by one payout at most, so two payouts built at
 * once (two daemons on PostgreSQL) can never both spend it; the second's insert finds it taken.
 */
export class CoinReservations1767225600017 implements MigrationInterface {
  name = 'CoinReservations1767225600017';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'btc_coin_reservations',
        columns: [{ ...col.ref('transfer_id'), isPrimary: true }, col.ref('payout_id'), col.ref('account_id'), col.str('chain_id', 32), col.time('created_at')],
        indices: [new TableIndex({ name: 'btc_coin_reservations_payout', columnNames: ['payout_id'] })],
      }),
    );
    await q.createIndex('chain_transfers', new TableIndex({ name: 'chain_transfers_spent', columnNames: ['spent_transfer_id'] }));
    // An account's received coins on a chain, read at each payout.
    await q.createIndex(
      'chain_transfers',
      new TableIndex({ name: 'chain_transfers_account_coins', columnNames: ['account_id', 'chain_id', 'direction', 'status'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('chain_transfers', 'chain_transfers_account_coins');
    await q.dropIndex('chain_transfers', 'chain_transfers_spent');
    await q.dropTable('btc_coin_reservations');
  }
}
