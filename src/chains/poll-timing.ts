/**
 * When to poll a chain whose blocks come on a fixed schedule (Tron: a block every 3 s, its
 * timestamp the slot's time): just after the next block's expected timestamp rather than at a fixed
 * interval, so a block is read a small margin after it is made instead of anywhere up to an
 * interval later, with no more polls than blocks. Pure: the watcher gives it the clock.
 */

/** After the expected time: a block is announced a little after its slot's timestamp. */
export const ALIGN_MARGIN_MS = 150;
/** A block expected and not there yet is asked for again this often... */
export const LATE_RETRY_MS = 250;
/** ...for this long past its expected time; then the poll waits for the next slot (a slot missed by its producer). */
export const LATE_WINDOW_MS = 1000;
/** A tip whose timestamp is further from now than this many block times (a node syncing or stalled, a clock far off, blocks made on demand): the fixed interval instead. */
export const ALIGN_WITHIN_BLOCKS = 10;
/** Never sooner than this. */
export const MIN_DELAY_MS = 50;

export interface PollTiming {
  /** Now, and the newest block's timestamp (ms); null when the node gives none. */
  nowMs: number;
  tipTimeMs: number | null;
  /** The chain's block time; 0: blocks not on a schedule (never aligned). */
  blockMs: number;
  /** The configured poll interval: the pause when not aligned, and the least pause between polls when longer than a block time. */
  intervalMs: number;
}

/**
 * The pause before the next poll. Aligned when the chain has a block time and the tip's timestamp is
 * within ALIGN_WITHIN_BLOCKS block times of now: the first expected block time (tip + k × block
 * time, plus ALIGN_MARGIN_MS) not before now + (interval − block time), so an interval longer than
 * a block time still polls that much less often. A block due and not there yet (now past its
 * expected time by less than LATE_WINDOW_MS) is asked for again after LATE_RETRY_MS. Bounded to
 * [MIN_DELAY_MS, max(interval, block time) + ALIGN_MARGIN_MS].
 */
export function alignedPollDelayMs(p: PollTiming): number {
  const { nowMs, tipTimeMs, blockMs, intervalMs } = p;
  if (blockMs <= 0 || tipTimeMs === null || !Number.isFinite(tipTimeMs)) return intervalMs;
  const elapsed = nowMs - tipTimeMs;
  if (elapsed < -blockMs || elapsed > ALIGN_WITHIN_BLOCKS * blockMs) return intervalMs;
  const max = Math.max(intervalMs, blockMs) + ALIGN_MARGIN_MS;
  const clamp = (ms: number) => Math.min(max, Math.max(MIN_DELAY_MS, Math.round(ms)));
  const late = elapsed - blockMs - ALIGN_MARGIN_MS;
  if (intervalMs <= blockMs && late >= 0 && late < LATE_WINDOW_MS) return clamp(LATE_RETRY_MS);
  const earliest = nowMs + Math.max(0, intervalMs - blockMs);
  const k = Math.max(1, Math.floor((earliest - tipTimeMs - ALIGN_MARGIN_MS) / blockMs) + 1);
  return clamp(tipTimeMs + k * blockMs + ALIGN_MARGIN_MS - nowMs);
}
