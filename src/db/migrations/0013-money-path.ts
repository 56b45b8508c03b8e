import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The money path both ways. A chain transfer row knows what its address is for (`purpose`, copied
 * from the address row: the transfer router picks its handler by it) and its `direction`: an
 * incoming payment, or an outgoing spend of the wallet's coins, which is a Bitcoin input spending
 * a received output (`spent_transfer_id`, that output's row) or an EVM/Tron transaction sent from a
 * wallet address (`nonce`). A transfer's identity now includes its direction: one transaction can
 * both spend from and pay the wallet (a sweep, change). The transactions table holds at most one
 * live row (not reverted, not an adjustment) per chain transfer and type, and per withdrawal and
 * type: the money owner's insert of a pending row is then its own guard, so a credit or a hold
 * made twice for the same thing books it once, with or without a lock around it.
 */
export class MoneyPath1767225600013 implements MigrationInterface {
  name = 'MoneyPath1767225600013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chain_transfers ADD COLUMN direction varchar(8) NOT NULL DEFAULT 'incoming'`);
    await q.query(`ALTER TABLE chain_transfers ADD COLUMN purpose varchar(16) NOT NULL DEFAULT 'invoice'`);
    await q.query('ALTER TABLE chain_transfers ADD COLUMN spent_transfer_id varchar(36)');
    await q.query('ALTER TABLE chain_transfers ADD COLUMN nonce integer');
    await q.query('UPDATE chain_transfers SET purpose = (SELECT a.purpose FROM addresses a WHERE a.id = chain_transfers.address_id)');
    await q.query('DROP INDEX chain_transfers_key');
    await q.query('CREATE UNIQUE INDEX chain_transfers_key ON chain_transfers (chain_id, txid, coin_id, output_index, direction)');
    await q.query(
      `CREATE UNIQUE INDEX transactions_live_transfer ON transactions (chain_transfer_id, type) WHERE status <> 'reverted' AND reverses_id IS NULL`,
    );
    await q.query(`CREATE UNIQUE INDEX transactions_live_withdrawal ON transactions (withdrawal_id, type) WHERE status <> 'reverted' AND reverses_id IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['transactions_live_withdrawal', 'transactions_live_transfer', 'chain_transfers_key']) await q.query(`DROP INDEX ${name}`);
    await q.query(`DELETE FROM chain_transfers WHERE direction <> 'incoming'`);
    await q.query('CREATE UNIQUE INDEX chain_transfers_key ON chain_transfers (chain_id, txid, coin_id, output_index)');
    for (const column of ['nonce', 'spent_transfer_id', 'purpose', 'direction']) await q.query(`ALTER TABLE chain_transfers DROP COLUMN ${column}`);
  }
}
