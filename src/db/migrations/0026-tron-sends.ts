import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/**
 * The wallet's own Tron transactions share `evm_sends` (the account chains' send store: one row a
 * signed transaction, its sender's sequence number in `nonce`): a Tron transaction has no nonce but
 * an expiration (ms since the epoch, as in its raw_data), after which it can never be mined.
 */
export class TronSends1767225600026 implements MigrationInterface {
  name = 'TronSends1767225600026';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn('evm_sends', new TableColumn({ name: 'expiration', type: 'varchar', length: '20', isNullable: true }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('evm_sends', 'expiration');
  }
}
