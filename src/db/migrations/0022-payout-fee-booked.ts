import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/**
 * What the chain took for a payout, as booked from the operator's `network` book to `external`
 * (PRODUCT §8a): null until its transaction is confirmed; the guard that books it once, and that
 * books only the difference when a reorganisation lets another candidate (another fee) confirm it.
 */
export class PayoutFeeBooked1767225600022 implements MigrationInterface {
  name = 'PayoutFeeBooked1767225600022';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn('chain_payouts', new TableColumn({ name: 'fee_booked', type: 'varchar', length: '80', isNullable: true }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('chain_payouts', 'fee_booked');
  }
}
