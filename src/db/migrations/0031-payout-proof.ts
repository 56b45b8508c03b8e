import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A payout fails only on proof (PRODUCT §14): a candidate is the payment or the cancel that pays
 * the payout's coins back to the wallet (`coinkeep payouts cancel`); a payout remembers when a
 * cancel was asked, and when the chain core saw it mined after it had failed (reopened); the count
 * of "unknown" answers that used to fail a payout goes.
 */
export class PayoutProof1767225600031 implements MigrationInterface {
  name = 'PayoutProof1767225600031';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chain_payout_candidates ADD COLUMN kind varchar(8) NOT NULL DEFAULT 'pay'`);
    await q.query('ALTER TABLE chain_payouts ADD COLUMN cancel_requested_at varchar(30)');
    await q.query('ALTER TABLE chain_payouts ADD COLUMN reopened_at varchar(30)');
    // "Unknown" answers no longer count toward anything.
    await q.query('ALTER TABLE chain_payouts DROP COLUMN unknown_checks');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE chain_payouts ADD COLUMN unknown_checks integer NOT NULL DEFAULT 0');
    await q.dropColumn('chain_payouts', 'reopened_at');
    await q.dropColumn('chain_payouts', 'cancel_requested_at');
    await q.dropColumn('chain_payout_candidates', 'kind');
  }
}
