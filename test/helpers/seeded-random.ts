/**
 * A small seeded generator for property tests (mulberry32): the same seed gives the same sequence,
 * so a failing run is reproduced by its printed seed. Not for anything secret.
 */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A positive bigint of 1 to `maxDigits` decimal digits. */
  bigint(maxDigits: number): bigint {
    const digits = this.int(1, maxDigits);
    let s = String(this.int(1, 9));
    for (let i = 1; i < digits; i++) s += String(this.int(0, 9));
    return BigInt(s);
  }

  /** A positive bigint in [1, max]. */
  bigintUpTo(max: bigint): bigint {
    const digits = max.toString().length;
    for (;;) {
      const v = this.bigint(digits);
      if (v <= max) return v;
    }
  }
}

/** The seed of a property test: PROPERTY_SEED from the environment, else a fresh one (printed by the test). */
export const propertySeed = (): number => Number(process.env.PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 31));
