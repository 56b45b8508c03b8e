import test from 'ava';
import { ALIGN_MARGIN_MS } from '../../../../src/chains/poll-timing';
import { startTronFixture, type TronFixture } from './tron-fixture';

/**
 * Tron polled at its block time: the stand-in makes a block at each wall-clock slot of 500 ms
 * (timestamped with it, as a live network), the daemon polls just after each is due
 * (chains/poll-timing.ts, unit-tested there). Through the daemon: each block is scanned within a
 * margin of its timestamp, with about one tip read per block where the 100 ms interval would make five.
 */

const BLOCK_MS = 500;
const POLL_MS = 100;
const BLOCKS = 8;

async function watchBlocks(t: { teardown(fn: () => unknown): void }, blockTimeMs: number) {
  let f: TronFixture | null = null;
  const made: Array<{ height: number; at: number }> = [];
  f = await startTronFixture({ options: { poll_interval_ms: POLL_MS, block_time_ms: blockTimeMs } });
  t.teardown(() => f!.stop());
  const fixture = f;
  fixture.node.produce(BLOCK_MS, (height, at) => made.push({ height, at }));
  const status = () => fixture.td.daemon.chains.status()[0]!;
  // Settle: the first produced blocks (a jump from the stand-in's 2023 timestamps) are scanned.
  const settle = Date.now() + 5000;
  while (made.length < 3 || (status().scanned_height ?? -1) < made[made.length - 1]!.height) {
    if (Date.now() > settle) throw new Error(`not settled: ${JSON.stringify(status())}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const from = made.length;
  const reads = () => fixture.node.requests.filter((r) => r.path === '/wallet/getnowblock').length;
  const readsBefore = reads();
  const lags: number[] = [];
  while (lags.length < BLOCKS) {
    const next = made[from + lags.length];
    if (next && (status().scanned_height ?? -1) >= next.height) lags.push(Date.now() - next.at);
    await new Promise((r) => setTimeout(r, 2));
    if (made.length > from + BLOCKS + 10) throw new Error(`blocks not scanned: ${JSON.stringify(status())}, lags ${lags.join(', ')}`);
  }
  return { lags, reads: reads() - readsBefore };
}

test('aligned to the block timestamps: each block scanned a margin after its time, about one tip read a block', async (t) => {
  const { lags, reads } = await watchBlocks(t, BLOCK_MS);
  t.log(`lags ${lags.join(', ')} ms; ${reads} tip reads for ${BLOCKS} blocks`);
  // Read at its time + 150 ms (and a loaded machine's slack), never an interval later.
  for (const lag of lags) t.true(lag <= ALIGN_MARGIN_MS + 350, `lags ${lags.join(', ')}`);
  // A 100 ms interval would read the tip 5 times a block (40 here).
  t.true(reads <= BLOCKS * 2, `${reads} tip reads for ${BLOCKS} blocks`);
  t.true(reads >= BLOCKS - 1);
});

test('block_time_ms 0: the fixed poll interval, as before (the control of the test above)', async (t) => {
  const { reads } = await watchBlocks(t, 0);
  t.true(reads >= BLOCKS * 3, `${reads} tip reads for ${BLOCKS} blocks at a ${POLL_MS} ms interval`);
});
