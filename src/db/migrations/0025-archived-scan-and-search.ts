import { MigrationInterface, QueryRunner, Table, TableColumn, TableIndex } from 'typeorm';
import { col } from './table-helpers';

/**
 * Static addresses, part two (issue 17):
 *
 * - `archived_scans`: one row per static address outside the real-time watched set, for the slow
 *   scan of archived addresses. `checked_height` is the height up to which its transfers are
 *   recorded (the chain's cursor when it was archived, then each slow scan's); `balances` (EVM) the
 *   node balances seen there, per coin; `rewatched_height` the cursor when it was watched again
 *   (restore): the slow scan covers it up to there, then the row goes. Addresses archived before
 *   this migration were watched in real time up to the chain's cursor.
 * - `static_addresses.deposit_revived`: an address a deposit made active while the customer had
 *   another active one (docs/decisions.md); the one-active-address unique index leaves it out.
 * - `addresses.status` follows the static address's (archived ones are not loaded into the watched
 *   set), with an index of static address rows by change time for daemons sharing a database.
 * - `archived_scan_runs`: when each chain's slow scan last ran (its period survives restarts).
 * - Substring search: SQLite, an FTS5 trigram index of address, customer id and label, kept in
 *   step by triggers; PostgreSQL, pg_trgm GIN indexes when the extension can be created (else
 *   substring search scans the account's rows: docs/invoices.md, "Static addresses").
 */
export class ArchivedScanAndSearch1767225600025 implements MigrationInterface {
  name = 'ArchivedScanAndSearch1767225600025';

  async up(q: QueryRunner): Promise<void> {
    const pg = q.connection.options.type === 'postgres';
    await q.createTable(
      new Table({
        name: 'archived_scans',
        columns: [
          { ...col.ref('address_id'), isPrimary: true },
          col.str('chain_id', 32),
          col.int('checked_height'),
          col.int('rewatched_height', true),
          col.text('balances', true),
          col.time('updated_at'),
        ],
        indices: [new TableIndex({ name: 'archived_scans_chain', columnNames: ['chain_id', 'checked_height'] })],
      }),
    );
    await q.createTable(new Table({ name: 'archived_scan_runs', columns: [{ ...col.str('chain_id', 32), isPrimary: true }, col.time('ran_at')] }));
    await q.query(
      `INSERT INTO archived_scans (address_id, chain_id, checked_height, rewatched_height, balances, updated_at)
       SELECT s.id, a.chain_id, COALESCE(c.height, -1), NULL, NULL, s.updated_at
       FROM static_addresses s JOIN addresses a ON a.id = s.id LEFT JOIN chain_cursors c ON c.chain_id = a.chain_id
       WHERE s.status = 'archived'`,
    );
    await q.query(`UPDATE addresses SET status = 'archived' WHERE purpose = 'static' AND id IN (SELECT id FROM static_addresses WHERE status = 'archived')`);
    // Daemons sharing a database learn the static addresses another one restored (AddressService.loadWatched).
    await q.query(`CREATE INDEX addresses_static_changed ON addresses (updated_at) WHERE purpose = 'static'`);

    await q.addColumn('static_addresses', new TableColumn({ name: 'deposit_revived', type: 'integer', default: 0 }));
    await q.query('DROP INDEX static_addresses_active');
    await q.query(
      `CREATE UNIQUE INDEX static_addresses_active ON static_addresses (account_id, coin_id, customer_id) WHERE status = 'active' AND deposit_revived = 0`,
    );

    if (pg) {
      if (await trigramAvailable(q)) {
        await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
        for (const c of ['address', 'customer_id', 'label'])
          await q.query(`CREATE INDEX static_addresses_${c}_trgm ON static_addresses USING gin (${c} gin_trgm_ops)`);
      }
      return;
    }
    await q.query(
      `CREATE VIRTUAL TABLE static_addresses_search USING fts5(address, customer_id, label, content='static_addresses', content_rowid='rowid', tokenize='trigram case_sensitive 1')`,
    );
    await q.query(`INSERT INTO static_addresses_search (rowid, address, customer_id, label) SELECT rowid, address, customer_id, label FROM static_addresses`);
    await q.query(
      `CREATE TRIGGER static_addresses_search_insert AFTER INSERT ON static_addresses BEGIN
         INSERT INTO static_addresses_search (rowid, address, customer_id, label) VALUES (new.rowid, new.address, new.customer_id, new.label);
       END`,
    );
    await q.query(
      `CREATE TRIGGER static_addresses_search_delete AFTER DELETE ON static_addresses BEGIN
         INSERT INTO static_addresses_search (static_addresses_search, rowid, address, customer_id, label) VALUES ('delete', old.rowid, old.address, old.customer_id, old.label);
       END`,
    );
    await q.query(
      `CREATE TRIGGER static_addresses_search_update AFTER UPDATE OF address, customer_id, label ON static_addresses BEGIN
         INSERT INTO static_addresses_search (static_addresses_search, rowid, address, customer_id, label) VALUES ('delete', old.rowid, old.address, old.customer_id, old.label);
         INSERT INTO static_addresses_search (rowid, address, customer_id, label) VALUES (new.rowid, new.address, new.customer_id, new.label);
       END`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      for (const c of ['address', 'customer_id', 'label']) await q.query(`DROP INDEX IF EXISTS static_addresses_${c}_trgm`);
    } else {
      for (const t of ['insert', 'delete', 'update']) await q.query(`DROP TRIGGER IF EXISTS static_addresses_search_${t}`);
      await q.query('DROP TABLE IF EXISTS static_addresses_search');
    }
    await q.query('DROP INDEX static_addresses_active');
    await q.query(`CREATE UNIQUE INDEX static_addresses_active ON static_addresses (account_id, coin_id, customer_id) WHERE status = 'active'`);
    await q.dropColumn('static_addresses', 'deposit_revived');
    await q.query('DROP INDEX addresses_static_changed');
    await q.query(`UPDATE addresses SET status = 'active' WHERE purpose = 'static'`);
    await q.dropTable('archived_scan_runs');
    await q.dropTable('archived_scans');
  }
}

/**
 * Whether this connection may create pg_trgm: installed already, or available and creatable by this
 * role (a superuser, or, from PostgreSQL 13, a trusted extension in a database where the role may
 * create). Asked first: a failed CREATE EXTENSION would abort the migration's transaction.
 */
async function trigramAvailable(q: QueryRunner): Promise<boolean> {
  const [row] = (await q.query(
    `SELECT
       EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed,
       EXISTS (SELECT 1 FROM pg_available_extension_versions WHERE name = 'pg_trgm' AND (trusted OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user))) AS creatable,
       has_database_privilege(current_database(), 'CREATE') AS may_create`,
  )) as Array<{ installed: boolean; creatable: boolean; may_create: boolean }>;
  return !!row && (row.installed || (row.creatable && row.may_create));
}
