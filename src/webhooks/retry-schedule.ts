import type { DeliveryStatus } from '../db/entities/webhooks';

/** The waits after a failed attempt (SPEC "Events"): 1 min, 5 min, 15 min, 1 h, 6 h, 24 h. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000] as const;

/** Attempts of one schedule: the first and one after each wait; after the last failure, `exhausted`. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export interface ScheduleState {
  status: DeliveryStatus;
  /** RFC 3339 UTC, or null when no attempt is planned. */
  next_attempt_at: string | null;
}

/**
 * Where a delivery stands after attempt number `attempt` (1-based, within its schedule) ended at
 * `at`: succeeded, failed with the next attempt planned, or exhausted after the last one.
 */
export function afterAttempt(attempt: number, succeeded: boolean, at: Date): ScheduleState {
  if (succeeded) return { status: 'succeeded', next_attempt_at: null };
  if (attempt >= MAX_ATTEMPTS) return { status: 'exhausted', next_attempt_at: null };
  return { status: 'failed', next_attempt_at: new Date(at.getTime() + RETRY_DELAYS_MS[attempt - 1]!).toISOString() };
}
