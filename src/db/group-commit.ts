import type { EntityManager } from 'typeorm';
import { rawQuery } from './raw';
import { closeScope, openScope } from './tx-scope';
import type { Store } from './store';

interface Job {
  fn: (em: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** At most this many jobs share one transaction. */
const MAX_BATCH = 64;

/**
 * Group commit on SQLite: write jobs that arrive together share one transaction, each inside its
 * own savepoint. A job that throws is rolled back to its savepoint alone and gets its error; the
 * others commit, and every caller is answered only after the COMMIT, so nothing is reported done
 * before it is durable. A failed COMMIT fails the whole batch. On PostgreSQL each job is its own
 * transaction (the server runs them concurrently and groups commits itself).
 *
 * Why: on SQLite every transaction pays BEGIN, COMMIT and a WAL append of each page it touched;
 * under a stream of invoice creations most of those pages are the same ones (the ends of the
 * indexes, the counters), so one commit for the batch writes them once.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private draining = false;

  constructor(private readonly store: Store) {}

  run<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    if (this.store.dialect !== 'sqlite') return this.store.write(fn);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) {
        this.draining = true;
        // One turn of the event loop first: the requests whose bytes have already arrived reach
        // this queue too (their way here is promise continuations only).
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      let batch: Job[] = [];
      let outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
      try {
        outcomes = await this.store.write(async (em) => {
          batch = this.queue.splice(0, MAX_BATCH);
          const out: typeof outcomes = [];
          for (const job of batch) {
            await rawQuery(em, 'SAVEPOINT group_job');
            try {
              const value = await job.fn(em);
              await rawQuery(em, 'RELEASE group_job');
              out.push({ ok: true, value });
            } catch (error) {
              await rawQuery(em, 'ROLLBACK TO group_job');
              await rawQuery(em, 'RELEASE group_job');
              // What the transaction kept in memory (tx-scope) may be what the job wrote and undid.
              closeScope(em);
              openScope(em);
              out.push({ ok: false, error });
            }
          }
          return out;
        });
      } catch (err) {
        // The transaction failed as a whole (or never began: then nothing was taken, fail them all).
        for (const job of batch.length > 0 ? batch : this.queue.splice(0)) job.reject(err);
        continue;
      }
      outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.value) : batch[i]!.reject(o.error)));
    }
    this.draining = false;
  }
}
