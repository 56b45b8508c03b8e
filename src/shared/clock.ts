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

/** RFC 3339 UTC with milliseconds: the one timestamp format of every response and column. An invalid date throws. */
export const iso = (d: Date): string => d.toISOString();

export const unixSeconds = (d: Date): number => Math.floor(d.getTime() / 1000);
