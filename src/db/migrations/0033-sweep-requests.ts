import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { col } from './table-helpers';

/**
 * A payout's "sweep now" (issue 29 §6): the payout worker finds an account's treasury short of a
 * coin its deposits hold and asks for them to be swept at the next pass, whatever the coin's
 * minimum. A row, not a daemon's memory: on a shared database another daemon may hold the chain's
 * sweeps. One per chain, account and coin; the sweeper takes the rows it reads.
 */
export class SweepRequests1767225600033 implements MigrationInterface {
  name = 'SweepRequests1767225600033';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'sweep_requests',
        columns: [
          { ...col.str('chain_id', 32), isPrimary: true },
          { ...col.ref('account_id'), isPrimary: true },
          { ...col.ref('coin_id'), isPrimary: true },
          col.time('created_at'),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('sweep_requests');
  }
}
