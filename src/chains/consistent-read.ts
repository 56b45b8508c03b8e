/** How often one `blocks` call re-reads a range the node reorganised while it was being read. */
const CONSISTENT_READ_ATTEMPTS = 3;

/**
 * A range of blocks read again while `read` finds it changed under it (null); after the last
 * attempt an error, and the watcher retries the range at its next poll.
 */
export async function readConsistently<T>(node: string, from: number, to: number, read: () => Promise<T | null>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const got = await read();
    if (got !== null) return got;
    if (attempt === CONSISTENT_READ_ATTEMPTS) throw new Error(`${node}: blocks ${from}..${to} changed while they were read; retrying at the next poll`);
  }
}
