import type { RateEngine } from '../rates/engine';

/**
 * Intervals a six-field cron expression can repeat evenly: divisors of a minute in seconds, of an
 * hour in minutes, of a day in hours.
 */
const EVEN_INTERVALS: ReadonlyArray<[seconds: number, schedule: string]> = [
  ...[1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30].map((s): [number, string] => [s, `*/${s} * * * * *`]),
  [60, '0 * * * * *'],
  ...[2, 3, 4, 5, 6, 10, 12, 15, 20, 30].map((m): [number, string] => [m * 60, `0 */${m} * * * *`]),
  [3600, '0 0 * * * *'],
  ...[2, 3, 4, 6, 8, 12].map((h): [number, string] => [h * 3600, `0 0 */${h} * * *`]),
  [86400, '0 0 0 * * *'],
];

/**
 * A node-cron schedule running every `seconds`. Cron cannot repeat evenly at an interval that does
 * not divide the minute (or hour, or day): `*\/45` fires at :00 and :45, 45 s then 15 s apart. Such
 * an interval is rounded down to the nearest even one (45 → 30, 90 → 60, 7 → 6), so rates are
 * refreshed at least as often as configured and never age past what the operator planned for.
 */
export function everySeconds(seconds: number): string {
  let chosen = EVEN_INTERVALS[0]![1];
  for (const [s, schedule] of EVEN_INTERVALS) if (s <= seconds) chosen = schedule;
  return chosen;
}

export function refreshRatesJob(engine: RateEngine, seconds: number): { name: string; schedule: string; run(signal: AbortSignal): Promise<void> } {
  return {
    name: 'refresh-rates',
    schedule: everySeconds(seconds),
    run: (signal) => engine.refresh(signal),
  };
}
