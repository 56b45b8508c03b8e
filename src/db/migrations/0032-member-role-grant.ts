import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/**
 * When and by whom each member got its role (issue 29 §5): an approval counts only from an owner
 * or admin who has held that role for 24 hours when another member added or promoted them.
 * `role_granted_by` is that member's id; null when the operator did, whose members hold their
 * rights at once. Members made before this are counted as the operator's: held long enough.
 */
export class MemberRoleGrant1767225600032 implements MigrationInterface {
  name = 'MemberRoleGrant1767225600032';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn('members', new TableColumn({ name: 'role_granted_at', type: 'varchar', length: '30', isNullable: true }));
    await q.addColumn('members', new TableColumn({ name: 'role_granted_by', type: 'varchar', length: '36', isNullable: true }));
    await q.query('UPDATE members SET role_granted_at = created_at');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('members', 'role_granted_by');
    await q.dropColumn('members', 'role_granted_at');
  }
}
