import path from 'node:path';
import { Worker } from 'node:worker_threads';

export interface CheckpointerSettings {
  file: string;
  intervalMs: number;
  /** Past this WAL size the main connection is asked to empty the log. */
  truncateAboveBytes: number;
}

const DEFAULTS = { intervalMs: 100, truncateAboveBytes: 64 * 1024 * 1024 };

/**
 * Background WAL checkpoints for the daemon's SQLite file. By default the connection that commits
 * runs a checkpoint every 1000 WAL pages, on the event loop, with two fsyncs: that was most of the
 * cost of a write transaction (docs/benchmarks.md). Here a
 * worker thread with its own connection does the copying and the fsyncs, and the main connection
 * does none (`wal_autocheckpoint = 0`) except, rarely, emptying a log grown past its bound
 * (`truncate`, which the store runs between two transactions; the frames are copied already, so
 * it is short). Durability is unchanged: commits append to the WAL as before, and a checkpoint
 * syncs the log before it copies (synchronous = NORMAL on both connections).
 */
export class WalCheckpointer {
  private constructor(private readonly worker: Worker) {}

  static start(file: string, truncate: () => Promise<void>, settings: Partial<Omit<CheckpointerSettings, 'file'>> = {}): WalCheckpointer {
    const worker = new Worker(path.join(__dirname, 'wal-checkpoint.worker.js'), { workerData: { file, ...DEFAULTS, ...settings } });
    worker.unref();
    worker.on('message', (m: unknown) => {
      if (m !== 'truncate') return;
      // A failed truncation (busy) leaves the log as it is; the worker asks again later.
      truncate().then(
        () => worker.postMessage('truncated'),
        () => worker.postMessage('truncated'),
      );
    });
    return new WalCheckpointer(worker);
  }

  /** Stops the thread and closes its connection (before the main connection closes). */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = (m?: unknown) => (m === undefined || m === 'stopped' ? resolve() : undefined);
      this.worker.on('message', done);
      this.worker.once('exit', () => resolve());
      this.worker.once('error', () => resolve());
      this.worker.postMessage('stop');
    });
    await this.worker.terminate();
  }
}
