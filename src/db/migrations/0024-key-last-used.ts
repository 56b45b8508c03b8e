import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/** When a key last made an authenticated request (to the nearest flush, about 10 s): the dashboard's Keys screen. */
export class KeyLastUsed1767225600024 implements MigrationInterface {
  name = 'KeyLastUsed1767225600024';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn('api_keys', new TableColumn({ name: 'last_used_at', type: 'varchar', length: '30', isNullable: true }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('api_keys', 'last_used_at');
  }
}
