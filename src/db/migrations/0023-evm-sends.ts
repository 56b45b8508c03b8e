import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * The wallet's own EVM transactions (PRODUCT §8a): sweeps of deposit addresses into an account's
 * treasury, the gas station's top-ups, and payouts from a treasury. Each row is one nonce of one
 * sending address, written with its signed bytes before anything is broadcast; a replacement (same
 * nonce, higher fee) rewrites the bytes and adds its txid to `candidate_txids`. The partial unique
 * index over live rows is the nonce store's guard: two passes (two daemons) can never give one
 * nonce of one address to two transactions. `booked_at` guards the booking of what the chain took.
 * A sweep names the credited incoming transfers it moves (`evm_swept_transfers`), so a deposit is
 * swept once and a dropped sweep gives them back.
 */
export class EvmSends1767225600023 implements MigrationInterface {
  name = 'EvmSends1767225600023';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'evm_sends',
        columns: [
          col.id(),
          col.str('chain_id', 32),
          col.str('kind', 16),
          col.str('from_address', 64),
          col.str('from_path', 64),
          col.int('nonce'),
          col.str('to_address', 64),
          col.ref('coin_id'),
          col.str('amount', 80),
          col.ref('account_id', true),
          col.ref('withdrawal_id', true),
          col.ref('after_id', true),
          col.str('txid', 80),
          col.text('raw'),
          col.text('candidate_txids'),
          col.str('gas_limit', 40),
          col.str('max_fee_per_gas', 40),
          col.str('max_priority_fee_per_gas', 40),
          col.str('status', 16),
          col.int('sent_height', true),
          col.int('block_height', true),
          col.str('block_hash', 80, true),
          col.str('fee_paid', 80, true),
          col.int('succeeded', true),
          col.time('booked_at', true),
          col.time('created_at'),
          col.time('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'evm_sends_status', columnNames: ['chain_id', 'status'] }),
          new TableIndex({ name: 'evm_sends_withdrawal', columnNames: ['withdrawal_id'] }),
          new TableIndex({ name: 'evm_sends_txid', columnNames: ['chain_id', 'txid'] }),
        ],
      }),
    );
    await q.query(`CREATE UNIQUE INDEX evm_sends_nonce ON evm_sends (chain_id, from_address, nonce) WHERE status <> 'dropped'`);
    await q.createTable(
      new Table({
        name: 'evm_swept_transfers',
        columns: [{ ...col.ref('transfer_id'), isPrimary: true }, col.ref('send_id'), col.time('created_at')],
        indices: [new TableIndex({ name: 'evm_swept_transfers_send', columnNames: ['send_id'] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('evm_swept_transfers');
    await q.query('DROP INDEX evm_sends_nonce');
    await q.dropTable('evm_sends');
  }
}
