import 'reflect-metadata';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { DataSource, EntityManager, EntitySchema, MixedList } from 'typeorm';
import { AsyncLock } from '../shared/async-lock';
import { MIGRATIONS } from './migrations';
import { ENTITIES } from './entities';
import { rawRun } from './raw';
import { PostgresRoleLock, soleDaemon, type RoleLock } from './role-lock';
import { WalCheckpointer } from './wal-checkpointer';

export type Dialect = 'sqlite' | 'postgres';

/** At most this many grouped writes share one SQLite transaction (see `writeGrouped`). */
const MAX_GROUP = 64;

interface GroupedWrite {
  fn: (em: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** How long a SQLite statement waits for a lock another connection holds. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

export interface StoreOptions {
  url: string;
  /** Tests only: build the schema from entities instead of migrations. Never used by the daemon. */
  synchronize?: boolean;
  /** SQLite file: checkpoint the WAL on a worker thread (the daemon; see wal-checkpointer.ts). */
  backgroundCheckpoints?: boolean;
}

/**
 * The one database handle. Every write transaction goes through `write`: on SQLite one async lock
 * serialises them (TypeORM's better-sqlite3 driver shares one connection, so concurrent
 * transactions would interleave); on PostgreSQL they are real concurrent transactions. `roles` are
 * the roles that run once among the daemons on this database.
 */
export class Store {
  /** Grouped writes waiting for the write lock (SQLite). */
  private readonly grouped: GroupedWrite[] = [];
  private groupScheduled = false;

  private constructor(
    readonly ds: DataSource,
    readonly dialect: Dialect,
    readonly roles: RoleLock,
    private readonly checkpointer: WalCheckpointer | null,
    private readonly lock = new AsyncLock(),
  ) {}

  static async open(opts: StoreOptions): Promise<Store> {
    const entities = ENTITIES as MixedList<EntitySchema>;
    let ds: DataSource;
    let dialect: Dialect;
    const file = opts.url.startsWith('sqlite:') ? opts.url.slice('sqlite:'.length) : null;
    const backgroundCheckpoints = file !== null && file !== ':memory:' && opts.backgroundCheckpoints === true;
    if (file !== null) {
      if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      dialect = 'sqlite';
      ds = new DataSource({
        type: 'better-sqlite3',
        database: file,
        enableWAL: file !== ':memory:',
        timeout: SQLITE_BUSY_TIMEOUT_MS,
        prepareDatabase: (db: { pragma(s: string): unknown }) => {
          db.pragma('foreign_keys = ON');
          db.pragma('synchronous = NORMAL');
          if (backgroundCheckpoints) db.pragma('wal_autocheckpoint = 0');
        },
        entities,
        migrations: MIGRATIONS,
        synchronize: opts.synchronize ?? false,
        logging: false,
      });
    } else {
      dialect = 'postgres';
      ds = new DataSource({
        type: 'postgres',
        url: opts.url,
        entities,
        migrations: MIGRATIONS,
        synchronize: opts.synchronize ?? false,
        logging: false,
        extra: { max: 10 },
      });
    }
    await ds.initialize();
    if (file !== null) restrictSqliteFiles(file);
    if (!backgroundCheckpoints) return new Store(ds, dialect, dialect === 'postgres' ? new PostgresRoleLock(opts.url) : soleDaemon, null);
    const lock = new AsyncLock();
    // Emptying the log must never wait on the event loop: while a reader is still on the old log
    // (another connection's long read) or the worker is checkpointing, it is busy at once and the
    // worker asks again later. With the busy timeout, each try slept up to 5 s on the loop, and a
    // reader in this process that needs the loop to finish (the export benchmark's bare script)
    // crawled on by one batch per 5 s.
    const truncate = () =>
      lock.run(async () => {
        await ds.query('PRAGMA busy_timeout = 0');
        try {
          await ds.query('PRAGMA wal_checkpoint(TRUNCATE)');
        } finally {
          await ds.query(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
        }
      });
    return new Store(ds, dialect, soleDaemon, WalCheckpointer.start(file!, truncate), lock);
  }

  /** Applies pending migrations; returns the names applied. */
  async migrate(): Promise<string[]> {
    const done = await this.ds.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  }

  async pendingMigrations(): Promise<boolean> {
    return this.ds.showMigrations();
  }

  /** Reads outside a transaction. */
  get read(): EntityManager {
    return this.ds.manager;
  }

  /** One write transaction; SQLite: serialised by the write lock. */
  write<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    if (this.dialect === 'sqlite') return this.lock.run(() => this.ds.transaction(fn));
    return this.ds.transaction(fn);
  }

  /**
   * A write transaction that may share its commit with other grouped writes waiting meanwhile
   * (SQLite): on SQLite's one connection writes take turns anyway, and a commit (writing every page
   * the transaction changed to the WAL) costs more than a short write itself, so the writes queued
   * while the lock was held run together in one transaction, each inside its own savepoint. Each
   * keeps its own outcome: one that throws is rolled back to its savepoint alone and rejects with
   * its error, the others are unaffected; every one resolves only once the shared commit is done
   * (and all reject if it fails). For short writes of hot paths that do nothing but database work
   * in `fn` (withdrawal creation); on PostgreSQL a plain `write`.
   */
  writeGrouped<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    if (this.dialect !== 'sqlite') return this.write(fn);
    return new Promise<T>((resolve, reject) => {
      this.grouped.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.scheduleGroup();
    });
  }

  private scheduleGroup(): void {
    if (this.groupScheduled || this.grouped.length === 0) return;
    this.groupScheduled = true;
    // After the I/O callbacks of this turn of the event loop: SQLite's statements are synchronous,
    // so a write would otherwise always find the lock free and commit alone; the requests that
    // reached their write in the same turn now share the commit, for one turn's latency at most.
    setImmediate(() => void this.lock.run(() => this.runGroup()));
  }

  private async runGroup(): Promise<void> {
    this.groupScheduled = false;
    const jobs = this.grouped.splice(0, MAX_GROUP);
    // Writes queued beyond this group wait for the lock after it.
    this.scheduleGroup();
    if (jobs.length === 0) return;
    if (jobs.length === 1) {
      const [job] = jobs;
      await this.ds.transaction(job!.fn).then(job!.resolve, job!.reject);
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; err: unknown }> = [];
    try {
      await this.ds.transaction(async (em) => {
        for (const job of jobs) {
          await rawRun(em, 'SAVEPOINT grouped_write');
          try {
            const value = await job.fn(em);
            await rawRun(em, 'RELEASE grouped_write');
            outcomes.push({ ok: true, value });
          } catch (err) {
            await rawRun(em, 'ROLLBACK TO grouped_write');
            await rawRun(em, 'RELEASE grouped_write');
            outcomes.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      for (const job of jobs) job.reject(err);
      return;
    }
    jobs.forEach((job, i) => {
      const o = outcomes[i]!;
      if (o.ok) job.resolve(o.value);
      else job.reject(o.err);
    });
  }

  /**
   * Reads at one point in time (a consistent snapshot across several queries): on PostgreSQL a
   * REPEATABLE READ transaction; on SQLite's one shared connection, a transaction under the write
   * lock (so no write interleaves).
   */
  snapshot<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    if (this.dialect === 'sqlite') return this.lock.run(() => this.ds.transaction(fn));
    return this.ds.transaction('REPEATABLE READ', fn);
  }

  async close(): Promise<void> {
    await this.roles.close();
    // The checkpointer's connection closes first, so the main one is the last and its close
    // checkpoints what is left and removes the WAL.
    await this.checkpointer?.stop();
    if (this.dialect === 'sqlite') await this.lock.run(async () => this.ds.destroy());
    else await this.ds.destroy();
  }
}

/** The database file and its WAL files: readable by the owner only (PRODUCT §13; the seed row lives there). */
function restrictSqliteFiles(file: string): void {
  if (file === ':memory:') return;
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
}
