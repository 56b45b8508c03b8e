import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { col } from './table-helpers';

/**
 * Cold storage (PRODUCT §18, issue 36 §2): per account and coin, the merchant's cold address and
 * the `keep` left hot; the excess of `available` is forwarded to the address as an ordinary
 * withdrawal. A rule is removed by marking it, so the security log's history keeps meaning; one
 * active rule per account and coin. An address is used from `effective_at` on (set or changed:
 * after the security-change window). `forwards` counts the rule's forwards: the next one's number
 * names its payout_id, and `custody_forwards` (rule, number) is the guard that one run makes one
 * withdrawal, whichever daemon runs it.
 */
export class Custody1767225600039 implements MigrationInterface {
  name = 'Custody1767225600039';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'custody_rules',
        columns: [
          col.id(),
          col.ref('account_id'),
          col.ref('coin_id'),
          col.str('address', 128),
          col.str('keep', 80),
          col.str('status', 16),
          col.str('address_set_by', 254),
          col.time('address_set_at'),
          col.time('effective_at'),
          col.int('forwards'),
          col.ref('last_withdrawal_id', true),
          col.time('created_at'),
          col.time('updated_at'),
          col.time('removed_at', true),
        ],
      }),
    );
    await q.query(`CREATE UNIQUE INDEX custody_rules_active ON custody_rules (account_id, coin_id) WHERE status = 'active'`);
    await q.createTable(
      new Table({
        name: 'custody_forwards',
        columns: [
          { ...col.ref('rule_id'), isPrimary: true },
          { ...col.int('seq'), isPrimary: true },
          col.ref('account_id'),
          col.ref('coin_id'),
          col.ref('withdrawal_id'),
          col.time('created_at'),
        ],
      }),
    );
    await q.query('CREATE UNIQUE INDEX custody_forwards_withdrawal ON custody_forwards (withdrawal_id)');
    await q.query('CREATE INDEX custody_forwards_account ON custody_forwards (account_id, coin_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('custody_forwards');
    await q.dropTable('custody_rules');
  }
}
