/**
 * A set of byte keys (a family's watch keys, such as Bitcoin output scripts) held as 32-bit hashes
 * in one open-addressing table: "surely absent" for almost every key in one or two memory reads,
 * with no string built and nothing allocated. A hit only means "maybe": two keys can share a hash,
 * so the caller confirms it against the exact set. Nothing is ever removed (a stale hash costs one
 * confirmation, never a wrong answer).
 */
export class KeyFilter {
  /** One hash per slot (0: empty); the table stays at most half full. */
  private slots = new Uint32Array(1 << 10);
  private count = 0;
  /** Scratch space of `pass`, kept between calls (one block after another). */
  private hashes = new Uint32Array(0);

  add(key: Uint8Array): void {
    this.addHash(hashKey(key));
  }

  mayHave(key: Uint8Array): boolean {
    return this.mayHaveHash(hashKey(key));
  }

  /** For keys its user hashes itself (never 0; see `mix`): the same set, without the bytes. */
  addHash(h: number): void {
    if (this.findSlot(this.slots, h) >= 0) return;
    if (2 * (this.count + 1) > this.slots.length) this.grow();
    this.place(this.slots, h);
    this.count++;
  }

  mayHaveHash(h: number): boolean {
    return this.findSlot(this.slots, h) >= 0;
  }

  /**
   * The items whose key may be in the set, and those without a key, in order. Every key is hashed
   * first, then every hash probed: the table is megabytes, mostly out of the CPU's caches, and
   * probes in a row overlap their cache misses where a hash-then-probe per item waits for each
   * (a block of 4,000 outputs screened in about half the time, `npm run bench btc`).
   */
  pass<T>(items: readonly T[], keyOf: (item: T) => Uint8Array | undefined): T[] {
    return this.passHashed(items, (item) => {
      const key = keyOf(item);
      // 0, never a key's hash: no key, so the item passes.
      return key === undefined ? 0 : hashKey(key);
    });
  }

  /** `pass` for keys its user hashes itself (`hashKey`, `hashText`, or its own ending in `mix`); 0: no key, the item passes. */
  passHashed<T>(items: readonly T[], hashOf: (item: T) => number): T[] {
    const n = items.length;
    if (this.hashes.length < n) this.hashes = new Uint32Array(n);
    const { hashes, slots } = this;
    for (let i = 0; i < n; i++) hashes[i] = hashOf(items[i]!);
    const passed: T[] = [];
    for (let i = 0; i < n; i++) if (hashes[i] === 0 || this.findSlot(slots, hashes[i]!) >= 0) passed.push(items[i]!);
    return passed;
  }

  private findSlot(slots: Uint32Array, h: number): number {
    const mask = slots.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = slots[i]!;
      if (v === 0) return -1;
      if (v === h) return i;
    }
  }

  private place(slots: Uint32Array, h: number): void {
    const mask = slots.length - 1;
    let i = h & mask;
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = h;
  }

  private grow(): void {
    const next = new Uint32Array(this.slots.length * 2);
    for (const h of this.slots) if (h !== 0) this.place(next, h);
    this.slots = next;
  }
}

/**
 * A key's hash: its length and its middle 8 bytes, or every byte of a shorter key. The keys held
 * here (Bitcoin output scripts: a type prefix, a 20–32-byte hash or key, at most two closing
 * opcodes) are uniformly random in their middle already; a block's outputs are in memory the CPU
 * has not cached, and reading 8 bytes of each rather than all of them halves their hashing
 * (`npm run bench btc`). Keys alike in those bytes only share a hash: a "maybe" more, confirmed away.
 */
export function hashKey(key: Uint8Array): number {
  const n = key.length;
  let h: number;
  if (n < 8) {
    // FNV-1a.
    h = 0x811c9dc5;
    for (let i = 0; i < n; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
  } else {
    const m = (n - 8) >> 1;
    const lo = key[m]! | (key[m + 1]! << 8) | (key[m + 2]! << 16) | (key[m + 3]! << 24);
    const hi = key[m + 4]! | (key[m + 5]! << 8) | (key[m + 6]! << 16) | (key[m + 7]! << 24);
    h = Math.imul(lo ^ n, 0xcc9e2d51) ^ Math.imul(hi, 0x1b873593);
  }
  return mix(h);
}

/** Characters of an address text a hash reads (see `hashText`). */
const TEXT_SPAN = 16;

/**
 * The hash of an address text (a family's canonical form): its length and its middle 16
 * characters, or all of a shorter one. Every form's prefix is fixed (`T`, `0x`, `bc1q`) and its
 * middle uniformly random (base58, hex, bech32 of a hash): 16 characters of it carry 64 bits or
 * more, and the rest only costs reading.
 */
export function hashText(text: string): number {
  const n = text.length;
  const from = n > TEXT_SPAN ? (n - TEXT_SPAN) >> 1 : 0;
  const to = Math.min(n, from + TEXT_SPAN);
  let h = 0x811c9dc5 ^ n;
  for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix(h);
}

/** A key hash's final mix: the low bits pick the slot. Never 0, the empty mark. */
export function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0 || 1;
}
