/**
 * Polling with a deadline. The pause between tries starts at 10 ms and grows by half each time up
 * to 150 ms: a condition met at once is seen at once, and a long wait (confirmations, a scan, a
 * retry that is due) asks a few times a second, not forty. A try is often a signed API read, a few
 * ms of CPU on each side: at 25 ms a waiting test took a sixth of a core from the daemons it waits
 * for (docs/testing.md).
 */
export function pollPauses(first = 10, most = 150): () => Promise<void> {
  let pause = first;
  return async () => {
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 1.5, most);
  };
}

/** Polls `ok` until it holds; fails naming `what` at the deadline. */
export async function waitUntil(what: string | (() => string | Promise<string>), ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pause = pollPauses();
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : await what()}`);
    await pause();
  }
}
