import type { TestDaemon } from './daemon';

/** Polls until the daemon's (first) chain has scanned to `tip` and is not in maintenance. */
export async function waitScannedTo(td: TestDaemon, tip: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = td.daemon.chains.status()[0]!;
    if ((status.scanned_height ?? -1) >= tip && !status.maintenance) return;
    if (Date.now() > deadline) throw new Error(`the chain was not scanned to ${tip} in time: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Polls until the daemon's (first) chain has its cursor: a loaded machine may miss the first
 * contact at start (the coins then wait in maintenance until a poll succeeds).
 */
export async function waitWatched(td: TestDaemon, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (td.daemon.chains.status()[0]!.scanned_height === null) {
    if (Date.now() > deadline) throw new Error(`the chain is not watched: ${JSON.stringify(td.daemon.chains.status()[0])}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
