import { MigrationInterface, QueryRunner } from 'typeorm';

/** Rows read per page while `max_cost` is filled. */
const PAGE = 10_000;

/** The send store's indexes: (name suffix, definition after ON <table>). */
const INDEXES: Array<[string, string, boolean]> = [
  ['status', '(chain_id, status)', false],
  ['withdrawal', '(withdrawal_id)', false],
  ['txid', '(chain_id, txid)', false],
  ['nonce', "(chain_id, from_address, nonce) WHERE status <> 'dropped'", true],
];

/**
 * The account chains' send store gets a neutral name (issue 31 §1): `evm_sends` becomes
 * `account_sends`, EVM's and Tron's own transactions alike, with `max_cost`, the most the chain can
 * take for a send in its native coin's base units (EVM: gas limit × max fee per gas; Tron: the most
 * it may burn), written with each row so `ledger reconcile` reads it instead of a product of
 * EVM's columns (Tron rows keep `gas_limit` = the burn, `max_fee_per_gas` = 1 for the send queue's
 * fee arithmetic). Filled here for the rows there are; its indexes are renamed with it.
 */
export class AccountSends1767225600035 implements MigrationInterface {
  name = 'AccountSends1767225600035';

  async up(q: QueryRunner): Promise<void> {
    await renameStore(q, 'evm_sends', 'account_sends');
    await q.query('ALTER TABLE account_sends ADD COLUMN max_cost varchar(80)');
    const pg = q.connection.options.type === 'postgres';
    const p = (i: number) => (pg ? `$${i}` : '?');
    let after = '';
    for (;;) {
      const rows = (await q.query(`SELECT id, gas_limit, max_fee_per_gas FROM account_sends WHERE id > ${p(1)} ORDER BY id LIMIT ${PAGE}`, [after])) as Array<{
        id: string;
        gas_limit: string;
        max_fee_per_gas: string;
      }>;
      // The product in bigint: SQLite's integers overflow at wei.
      for (const r of rows)
        await q.query(`UPDATE account_sends SET max_cost = ${p(1)} WHERE id = ${p(2)}`, [(BigInt(r.gas_limit) * BigInt(r.max_fee_per_gas)).toString(), r.id]);
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE account_sends DROP COLUMN max_cost');
    await renameStore(q, 'account_sends', 'evm_sends');
  }
}

/** Renames the table and its indexes (SQLite cannot rename an index: each is made again). */
async function renameStore(q: QueryRunner, from: string, to: string): Promise<void> {
  await q.query(`ALTER TABLE ${from} RENAME TO ${to}`);
  for (const [suffix, definition, unique] of INDEXES) {
    await q.query(`DROP INDEX ${from}_${suffix}`);
    await q.query(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${to}_${suffix} ON ${to} ${definition}`);
  }
}
