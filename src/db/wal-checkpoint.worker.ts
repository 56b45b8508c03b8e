import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointerSettings } from './wal-checkpointer';

/** The little of better-sqlite3 used here (the package ships no types; TypeORM loads it the same way). */
interface SqliteConnection {
  pragma(statement: string): unknown;
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database = require('better-sqlite3') as new (file: string, options: { timeout: number }) => SqliteConnection;

/**
 * The checkpointer's thread (see wal-checkpointer.ts): its own connection copies committed WAL
 * frames into the database file and pays the fsyncs, off the event loop.
 */
const { file, intervalMs, truncateAboveBytes } = workerData as CheckpointerSettings;
const db = new Database(file, { timeout: 2000 });
db.pragma('synchronous = NORMAL');
let askedToTruncate = false;

const walBytes = (): number => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;

const timer = setInterval(() => {
  try {
    // PASSIVE never blocks the writer (a stronger mode would make its open transactions fail).
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy (another checkpoint): the next tick tries again.
  }
  // Under a steady stream of commits the log is never wholly copied when a writer starts, so it
  // never restarts from its beginning: past the bound, the main connection empties it between
  // two transactions.
  if (!askedToTruncate && walBytes() > truncateAboveBytes) {
    askedToTruncate = true;
    parentPort!.postMessage('truncate');
  }
}, intervalMs);

parentPort!.on('message', (m: unknown) => {
  if (m === 'truncated') askedToTruncate = false;
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage('stopped');
});
