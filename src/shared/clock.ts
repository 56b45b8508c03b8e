/** Time comes from a Clock so tests can drive it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class FakeClock implements Clock {
  private ms: number;
  constructor(start: Date | string | number = '2026-01-01T00:00:00.000Z') {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  set(at: Date | string | number): void {
    this.ms = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

let lastMs = Number.NaN;
let lastIso = '';

/**
 * RFC 3339 UTC with milliseconds: the one timestamp format of every response and column. The last
 * one made is kept: a request's rows and events are stamped with the same instant several times,
 * and formatting it costs more than comparing it. An invalid date throws, as toISOString does.
 */
export const iso = (d: Date): string => {
  const ms = d.getTime();
  if (ms !== lastMs) {
    lastIso = d.toISOString();
    lastMs = ms;
  }
  return lastIso;
};

export const unixSeconds = (d: Date): number => Math.floor(d.getTime() / 1000);
