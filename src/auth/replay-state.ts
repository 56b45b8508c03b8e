import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPLAY_MARK_KIND, type MemoryReplayGuard, type ReplaySnapshot } from './replay-guard';

/**
 * The in-memory replay guard across restarts, without a write per request. A start marks the file
 * `open`; a clean stop replaces it with the guard's digests, marked `closed`. The next start
 * restores a closed file; an open (or unreadable) one means the last run ended without saving
 * (a crash, kill -9), so every signature timestamped up to this start is refused as a replay; so
 * does a closed one holding marks of another kind (saved by an older version).
 * No file at all: the data dir's first start, nothing was ever accepted.
 */
export const REPLAY_STATE_FILE = 'replay-guard.json';

type State = { state: 'open' } | ({ state: 'closed' } & ReplaySnapshot);

const write = (file: string, state: State): void => {
  writeFileSync(`${file}.tmp`, JSON.stringify(state), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
};

export function openReplayState(dataDir: string, guard: MemoryReplayGuard, startMs: number): { close(): void } {
  const file = path.join(dataDir, REPLAY_STATE_FILE);
  let text: string | null = null;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text !== null) {
    const saved = parse(text);
    if (saved?.state === 'closed') guard.restore(saved, startMs);
    else guard.refuseSignedUpTo(startMs);
  }
  write(file, { state: 'open' });
  return { close: () => write(file, { state: 'closed', ...guard.snapshot() }) };
}

function parse(text: string): State | null {
  try {
    const value = JSON.parse(text) as State;
    if (value.state === 'closed' && (value.marks !== REPLAY_MARK_KIND || !Array.isArray(value.entries))) return null;
    return value;
  } catch {
    return null;
  }
}
