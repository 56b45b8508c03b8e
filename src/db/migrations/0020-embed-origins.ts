import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { col } from './table-helpers';

/** The origins allowed to frame an account's payment pages (PUT /v1/embed); no row is no origin. */
export class EmbedOrigins1767225600020 implements MigrationInterface {
  name = 'EmbedOrigins1767225600020';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'embed_origins',
        columns: [{ ...col.ref('account_id'), isPrimary: true }, col.text('allowed_origins'), col.time('updated_at')],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('embed_origins');
  }
}
