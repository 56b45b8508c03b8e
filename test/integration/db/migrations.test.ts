import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EntitySchema } from 'typeorm';
import { ENTITIES } from '../../../src/db/entities';
import { MIGRATIONS } from '../../../src/db/migrations';
import { ArchivedScanAndSearch1767225600025 } from '../../../src/db/migrations/0025-archived-scan-and-search';
import { Store } from '../../../src/db/store';
import { tempPostgres } from '../../helpers/pg-database';

/** Registers `check` twice: on a new SQLite file and on a new PostgreSQL database. */
function onSqliteAndPostgres(what: string, check: (t: ExecutionContext, url: string) => Promise<void>): void {
  test(`on SQLite: ${what}`, async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-migrate-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    await check(t, `sqlite:${path.join(dir, 'coinkeep.db')}`);
  });
  test(`on PostgreSQL: ${what}`, async (t) => check(t, await tempPostgres(t)));
}

/**
 * The same migration test on SQLite and on PostgreSQL (a database of its own, `ck_<random>`):
 * every migration applies in order on an empty store, every entity's table exists with every
 * column the entity maps, and a second migrate applies nothing.
 */
async function checkMigrations(t: ExecutionContext, url: string): Promise<void> {
  const store = await Store.open({ url });
  try {
    t.true(await store.pendingMigrations());
    const applied = await store.migrate();
    t.deepEqual(
      applied,
      MIGRATIONS.map((m) => new m().name ?? m.name),
    );
    t.false(await store.pendingMigrations());
    t.deepEqual(await store.migrate(), [], 'a second migrate is a no-op');

    const q = store.ds.createQueryRunner();
    try {
      for (const entity of ENTITIES as EntitySchema[]) {
        const meta = store.ds.getMetadata(entity);
        const table = await q.getTable(meta.tableName);
        t.truthy(table, `table ${meta.tableName} exists`);
        const have = new Set(table!.columns.map((c) => c.name));
        for (const c of meta.columns) t.true(have.has(c.databaseName), `${meta.tableName}.${c.databaseName} exists`);
      }
    } finally {
      await q.release();
    }
  } finally {
    await store.close();
  }
  // Reopening an up-to-date store changes nothing either.
  const again = await Store.open({ url });
  try {
    t.deepEqual(await again.migrate(), []);
  } finally {
    await again.close();
  }
}

onSqliteAndPostgres('all migrations up; tables present; a second migrate is a no-op', checkMigrations);

/** Undoes `name` and every migration after it; their names, in the order they apply. */
async function undoDownTo(store: Store, name: string): Promise<string[]> {
  const names = MIGRATIONS.map((m) => new m().name ?? m.name);
  const later = names.slice(names.indexOf(name));
  for (let i = 0; i < later.length; i++) await store.ds.undoLastMigration({ transaction: 'each' });
  return later;
}

/**
 * Migration 0025 on a store that has archived static addresses (watched in real time before it):
 * each gets its slow-scan row from the chain's cursor, its address row leaves the watched set, and
 * undoing the migration and applying it again comes back to the same.
 */
async function checkArchivedBackfill(t: ExecutionContext, url: string): Promise<void> {
  const store = await Store.open({ url });
  try {
    await store.migrate();
    const pg = store.dialect === 'postgres';
    const p = (i: number) => (pg ? `$${i}` : '?');
    const at = '2026-01-01T00:00:00.000Z';
    const rows: Array<[string, string]> = [
      ['00000000-0000-4000-8000-000000000001', 'archived'],
      ['00000000-0000-4000-8000-000000000002', 'active'],
    ];
    for (const [id, status] of rows) {
      await store.ds.query(
        `INSERT INTO addresses (id, account_id, chain_id, coin_id, address, derivation_path, derivation_index, purpose, invoice_id, status, created_at, updated_at)
         VALUES (${p(1)}, ${p(2)}, 'ethereum', ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, 'static', NULL, 'active', ${p(7)}, ${p(8)})`,
        [id, 'acct', 'coin', `0x${id.slice(-4)}`, `m/${id.slice(-1)}`, Number(id.slice(-1)), at, at],
      );
      await store.ds.query(
        `INSERT INTO static_addresses (id, account_id, customer_id, coin_id, address, label, status, archived_at, last_deposit_at, idle_since, warned_at, created_at, updated_at)
         VALUES (${p(1)}, 'acct', 'cust', 'coin', ${p(2)}, NULL, ${p(3)}, NULL, NULL, ${p(4)}, NULL, ${p(5)}, ${p(6)})`,
        [id, `0x${id.slice(-4)}`, status, at, at, at],
      );
    }
    await store.ds.query(`INSERT INTO chain_cursors (chain_id, height, hash, updated_at) VALUES ('ethereum', 77, '0xabc', ${p(1)})`, [at]);
    // Undone back to before 0025 (0028 gives its rows their address), then applied again.
    const since0025 = await undoDownTo(store, new ArchivedScanAndSearch1767225600025().name ?? ArchivedScanAndSearch1767225600025.name);
    t.deepEqual(await store.migrate(), since0025);
    t.true(since0025.includes('ArchivedScanAddressSearchMerge1767225600028'));
    const scans = await store.ds.query('SELECT address_id, chain_id, address, checked_height, rewatched_height FROM archived_scans');
    t.deepEqual(
      scans.map((r: any) => [r.address_id, r.chain_id, r.address, Number(r.checked_height), r.rewatched_height]),
      [[rows[0]![0], 'ethereum', `0x${rows[0]![0].slice(-4)}`, 77, null]],
    );
    const indexed = pg
      ? (await store.ds.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'archived_scans_chain'`))[0].indexdef
      : (await store.ds.query(`SELECT sql FROM sqlite_master WHERE name = 'archived_scans_chain'`))[0].sql;
    t.regex(indexed, /\(chain_id, address_id\)$/, 'the slow scan reads pages of a chain in address-id order (0030)');
    const statuses = await store.ds.query('SELECT id, status FROM addresses ORDER BY id');
    t.deepEqual(
      statuses.map((r: any) => [r.id, r.status]),
      [
        [rows[0]![0], 'archived'],
        [rows[1]![0], 'active'],
      ],
    );
  } finally {
    await store.close();
  }
}

onSqliteAndPostgres(
  'migrations 0025 and 0028 give archived static addresses their slow-scan rows (with their address) from the chain cursor',
  checkArchivedBackfill,
);

/**
 * Migration 0029 (partial indexes): each index of a mostly-NULL column is defined over the rows
 * with a value only, the unique ones of live transaction rows and of settled ledger entries still
 * refuse a second row, a withdrawal's hold is found through its index (SQLite's plan), and undoing
 * the migration and applying it again comes back to the same, with the day sums of the
 * withdrawals already there.
 */
const PARTIAL = [
  'transactions_transfer',
  'transactions_invoice',
  'transactions_address',
  'transactions_live_transfer',
  'transactions_live_withdrawal',
  'ledger_entries_pending',
  'ledger_entries_reverses',
];
async function checkPartialIndexes(t: ExecutionContext, url: string): Promise<void> {
  const store = await Store.open({ url });
  try {
    await store.migrate();
    const pg = store.dialect === 'postgres';
    const p = (i: number) => (pg ? `$${i}` : '?');
    const at = '2026-01-01T00:00:00.000Z';
    const tx = (id: string, withdrawalId: string | null, status = 'pending') =>
      store.ds.query(
        `INSERT INTO transactions (id, account_id, type, status, coin_id, amount, withdrawal_id, created_at, updated_at)
         VALUES (${p(1)}, 'acct', ${p(2)}, ${p(3)}, 'coin', '1', ${p(4)}, ${p(5)}, ${p(6)})`,
        [id, withdrawalId ? 'withdrawal' : 'deposit', status, withdrawalId, at, at],
      );
    const entry = (id: string, pendingId: string | null) =>
      store.ds.query(
        `INSERT INTO ledger_entries (id, coin_id, debit_book, credit_book, amount, kind, pending_id, reverses_id, code, ref_id, created_at)
         VALUES (${p(1)}, 'coin', 'a', 'b', '1', ${p(2)}, ${p(3)}, NULL, 'c', NULL, ${p(4)})`,
        [id, pendingId ? 'void_pending' : 'pending', pendingId, at],
      );
    const roundTrip = async () => {
      const undone = await undoDownTo(store, 'WithdrawalSpeed1767225600029');
      t.deepEqual(await store.migrate(), undone);
    };
    await roundTrip();

    await tx('t1', 'w1');
    await t.throwsAsync(() => tx('t2', 'w1'), undefined, 'a second live row of one withdrawal is refused');
    await tx('t3', 'w1', 'reverted');
    for (const id of ['t4', 't5', 't6']) await tx(id, null);
    await entry('e1', null);
    await entry('e2', 'e1');
    await t.throwsAsync(() => entry('e3', 'e1'), undefined, 'a pending entry is settled once');
    await entry('e4', null);

    if (!pg) {
      const plan = await store.ds.query(
        `EXPLAIN QUERY PLAN SELECT id FROM transactions WHERE withdrawal_id = ? AND type = 'withdrawal' AND status = 'pending' AND status <> 'reverted' AND reverses_id IS NULL`,
        ['w1'],
      );
      t.regex(plan.map((r: { detail: string }) => r.detail).join(' '), /USING INDEX transactions_live_withdrawal/);
      const sql = await store.ds.query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN (${PARTIAL.map((n) => `'${n}'`).join(', ')})`);
      t.is(sql.length, PARTIAL.length);
      for (const r of sql as Array<{ name: string; sql: string }>) t.regex(r.sql, /WHERE \w+ IS NOT NULL/, r.name);
    } else {
      const defs = await store.ds.query(`SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN (${PARTIAL.map((n) => `'${n}'`).join(', ')})`);
      t.is(defs.length, PARTIAL.length);
      for (const r of defs as Array<{ indexname: string; indexdef: string }>) t.regex(r.indexdef, /WHERE \(*\w+ IS NOT NULL/, r.indexname);
    }
    // Undone with rows in place, and applied again over them; the day sums are filled from the
    // withdrawals that count toward the daily limit.
    for (const [id, status, amount] of [
      ['w1', 'pending', '0.25'],
      ['w2', 'completed', '0.5'],
      ['w3', 'cancelled', '7'],
    ]) {
      await store.ds.query(
        `INSERT INTO withdrawals (id, account_id, status, payout_id, coin_id, amount, to_address, confirmations, platform_fee, network_fee_reserved,
           network_fee_mode, total_debit, api_key_id, candidate_txids, created_at, updated_at)
         VALUES (${p(1)}, 'acct', ${p(2)}, NULL, 'coin', ${p(3)}, 'addr', 0, '0', '0', 'reserved', ${p(4)}, 'key', '[]', ${p(5)}, ${p(6)})`,
        [id, status, amount, amount, at, at],
      );
    }
    await roundTrip();
    await t.throwsAsync(() => tx('t7', 'w1'), undefined, 'still refused after a round trip');
    // 0034 holds them exactly.
    const sums = await store.ds.query('SELECT account_id, bucket, coin_id, total FROM withdrawal_day_totals');
    t.deepEqual(
      sums.map((r: any) => [r.account_id, r.bucket, r.coin_id, r.total]),
      [['acct', '2026-01-01T00:0', 'coin', '0.75']],
    );
  } finally {
    await store.close();
  }
}

onSqliteAndPostgres('migration 0029: partial indexes keep their guards and leave NULLs out; day sums filled', checkPartialIndexes);

/**
 * Migration 0035: the account chains' sends move from `evm_sends` to `account_sends` with their
 * `max_cost` filled (an EVM row's gas limit × max fee per gas, beyond SQLite's integers; a Tron
 * row's burn × 1), the live-nonce guard still refuses a second live row, and undoing it and
 * applying it again comes back to the same.
 */
async function checkAccountSends(t: ExecutionContext, url: string): Promise<void> {
  const store = await Store.open({ url });
  try {
    await store.migrate();
    const pg = store.dialect === 'postgres';
    const p = (i: number) => (pg ? `$${i}` : '?');
    const undone = await undoDownTo(store, 'AccountSends1767225600035');
    const at = '2026-01-01T00:00:00.000Z';
    const send = (table: string, id: string, nonce: number, gasLimit: string, maxFee: string, status = 'broadcast') =>
      store.ds.query(
        `INSERT INTO ${table} (id, chain_id, kind, from_address, from_path, nonce, to_address, coin_id, amount, account_id, withdrawal_id, after_id, txid, raw,
           candidate_txids, gas_limit, max_fee_per_gas, max_priority_fee_per_gas, status, created_at, updated_at)
         VALUES (${p(1)}, 'chain', 'sweep', 'from', 'm/0', ${p(2)}, 'to', 'coin', '1', NULL, NULL, NULL, ${p(3)}, 'sealed', '[]', ${p(4)}, ${p(5)}, '1', ${p(6)}, ${p(7)}, ${p(8)})`,
        [id, nonce, `tx-${id}`, gasLimit, maxFee, status, at, at],
      );
    await send('evm_sends', 's1', 0, '100000', '5000000000000000');
    await send('evm_sends', 's2', 1, '30000000', '1');
    t.deepEqual(await store.migrate(), undone);
    const rows = await store.ds.query('SELECT id, max_cost FROM account_sends ORDER BY id');
    t.deepEqual(
      rows.map((r: any) => [r.id, r.max_cost]),
      [
        ['s1', '500000000000000000000'],
        ['s2', '30000000'],
      ],
    );
    await t.throwsAsync(() => send('account_sends', 's3', 0, '1', '1'), undefined, 'a live nonce is taken once');
    await send('account_sends', 's4', 0, '1', '1', 'dropped');
    const roundTrip = await undoDownTo(store, 'AccountSends1767225600035');
    t.deepEqual(await store.migrate(), roundTrip);
    t.is(Number((await store.ds.query('SELECT COUNT(*) AS n FROM account_sends'))[0].n), 3);
    await t.throwsAsync(() => send('account_sends', 's5', 1, '1', '1'), undefined, 'still refused after a round trip');
  } finally {
    await store.close();
  }
}

onSqliteAndPostgres('migration 0035: evm_sends becomes account_sends with max_cost filled; the nonce guard holds', checkAccountSends);
