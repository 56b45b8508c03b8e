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

  add(key: Uint8Array): void {
    const h = hashKey(key);
    if (this.findSlot(this.slots, h) >= 0) return;
    if (2 * (this.count + 1) > this.slots.length) this.grow();
    this.place(this.slots, h);
    this.count++;
  }

  mayHave(key: Uint8Array): boolean {
    return this.findSlot(this.slots, hashKey(key)) >= 0;
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

/** FNV-1a over the bytes, then a final mix (the low bits pick the slot); never 0, the empty mark. */
function hashKey(key: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0 || 1;
}
