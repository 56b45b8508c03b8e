import 'reflect-metadata';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { DataSource, EntityManager, EntitySchema, MixedList } from 'typeorm';
import { AsyncLock } from '../shared/async-lock';
import { MIGRATIONS } from './migrations';
import { ENTITIES } from './entities';
import { PostgresRoleLock, soleDaemon, type RoleLock } from './role-lock';
import { collectHooks, runHooks, type CommitHooks } from './after-commit';
import { closeScope, openScope } from './tx-scope';
import { WalCheckpointer } from './wal-checkpointer';

export type Dialect = 'sqlite' | 'postgres';

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
          // Temporary files in memory. Above all the savepoint journal: a group commit runs each
          // creation in a savepoint, whose first change to each page the transaction had already
          // changed is copied there; past 64 KiB SQLite spilled it to a temporary file (created,
          // written and deleted again for every creation: a fifth of a withdrawal's creation time).
          // Large sorts (an index built by a migration) are then held in memory too.
          db.pragma('temp_store = MEMORY');
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

  /**
   * One write transaction; SQLite: serialised by the write lock, with a scope of kept values
   * (tx-scope). The work it asked to run after its commit (after-commit.ts) runs once it committed
   * (and, on SQLite, once the lock is free for what that work starts).
   */
  async write<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    const hooks: CommitHooks = new Map();
    const result =
      this.dialect === 'sqlite'
        ? await this.lock.run(() => this.ds.transaction((em) => collectHooks(em, hooks, (e) => scopedRun(e, fn))))
        : await this.ds.transaction((em) => collectHooks(em, hooks, fn));
    if (hooks.size > 0) runHooks(hooks, (err) => process.emitWarning(`after-commit work failed: ${err instanceof Error ? err.message : String(err)}`));
    return result;
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

  /** Whether the database answers a trivial query within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([
        this.ds.query('SELECT 1').then(
          () => true,
          () => false,
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The connections' state for operators: on SQLite the write transactions holding or waiting for
   * the one connection; on PostgreSQL the pool's connections (total, idle) and the callers waiting for one.
   */
  poolHealth(): { writers: number; total: number | null; idle: number | null; waiting: number | null } {
    if (this.dialect === 'sqlite') return { writers: this.lock.depth, total: 1, idle: null, waiting: null };
    const pool = (this.ds.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number } }).master;
    return { writers: 0, total: pool?.totalCount ?? null, idle: pool?.idleCount ?? null, waiting: pool?.waitingCount ?? null };
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

/** `fn` in the transaction of `em` with a scope of kept values open for its length. */
async function scopedRun<T>(em: EntityManager, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  openScope(em);
  try {
    return await fn(em);
  } finally {
    closeScope(em);
  }
}
