import { hashKey, hashText, KeyFilter } from './key-filter';

/** A family's watch key of an address (see ChainAdapter.watchKey); null for one it cannot pay. */
export type WatchKeyOf = (address: string) => Uint8Array | null;

/**
 * The addresses the core watches, per chain (or per group of chains sharing them), in memory: loaded at start and kept current as
 * addresses are derived, so a transfer to an unknown address costs one map lookup and no I/O.
 * Values are address row ids; the row itself is read only on a hit. Each chain also has a KeyFilter
 * that screens its blocks' transfers before any lookup: of the watch keys, for a family that gives
 * them (the address text is then built and looked up only for the few that pass), else of the
 * address texts' hashes. A lookup in a map of a million strings misses the CPU's caches three or
 * four times (a bucket, an entry, the key string it compares); a probe of the filter once, and
 * probes in a row overlap their misses (docs/benchmarks.md, chains).
 */
export class WatchedAddresses {
  /** The address map of each group of chains (a chain not in `groups` is a group of its own). */
  private readonly byGroup = new Map<string, Map<string, string>>();
  /**
   * Per chain, its address rows whose address text another chain of its group holds already (the
   * first row of a text is the group's): the per-chain treasuries of EVM chains (one key, one row
   * a chain), and addresses issued before EVM chains shared their index counter. Few.
   */
  private readonly own = new Map<string, Map<string, string>>();
  private readonly keyed = new Map<string, { keyOf: WatchKeyOf; filter: KeyFilter }>();
  /** The hashes of the addresses of each group not keyed (yet): dropped once the group is. */
  private readonly texts = new Map<string, KeyFilter>();
  /** Static addresses this daemon made active again lately: address row id → when (ms). */
  private readonly restoredAt = new Map<string, number>();

  /**
   * `groups`: chain id → the group whose chains share one set (every EVM chain watches every EVM
   * address: PRODUCT §17); a chain not named watches its own.
   */
  constructor(private readonly groups: ReadonlyMap<string, string> = new Map()) {}

  /** The set `chainId` reads: its group's. */
  private groupOf(chainId: string): string {
    return this.groups.get(chainId) ?? `chain:${chainId}`;
  }

  /** Whether the two chains watch one set (an address of one is watched on the other). */
  shares(a: string, b: string): boolean {
    return a === b || this.groupOf(a) === this.groupOf(b);
  }

  add(chainId: string, address: string, addressId: string): void {
    const group = this.groupOf(chainId);
    let m = this.byGroup.get(group);
    if (!m) this.byGroup.set(group, (m = new Map()));
    const text = flat(address);
    const held = m.get(text);
    if (held !== undefined && held !== addressId) {
      // Another row of the same text in the group (another chain's, or this chain's rolled-back
      // allocation): this chain reads its own from here on.
      let own = this.own.get(chainId);
      if (!own) this.own.set(chainId, (own = new Map()));
      own.set(text, flat(addressId));
      return;
    }
    // The id too: a new UUIDv7 is built by concatenation (about 420 bytes an entry otherwise).
    if (held === undefined) m.set(text, flat(addressId));
    const keys = this.keyed.get(group);
    if (keys) return addKey(keys, address);
    let texts = this.texts.get(group);
    if (!texts) this.texts.set(group, (texts = new KeyFilter()));
    texts.addHash(hashText(address));
  }

  /**
   * From now on this chain's addresses are also screened by `keyOf` (its adapter's watch key);
   * the addresses already watched are keyed at once. A chain's watch key is its family's and never
   * changes (one family a group): a second call (a watcher built again, another chain of the
   * group) keeps the first.
   */
  keyBy(chainId: string, keyOf: WatchKeyOf): void {
    const group = this.groupOf(chainId);
    if (this.keyed.has(group)) return;
    const keys = { keyOf, filter: new KeyFilter() };
    for (const address of this.byGroup.get(group)?.keys() ?? []) addKey(keys, address);
    this.keyed.set(group, keys);
    this.texts.delete(group);
  }

  remove(chainId: string, address: string): void {
    const own = this.own.get(chainId);
    if (own?.delete(address)) return;
    this.byGroup.get(this.groupOf(chainId))?.delete(address);
  }

  /**
   * A static address made active again by this daemon (`at`, ms): watched at once, before its
   * change commits, and kept by `removeArchived` meanwhile.
   */
  restore(chainId: string, address: string, addressId: string, at: number): void {
    this.add(chainId, address, addressId);
    this.restoredAt.set(addressId, at);
  }

  /**
   * A static address read archived from the database (another daemon archived it) leaves the set,
   * unless this daemon restored it at `since` (ms) or later: that restore may not have committed
   * when the row was read. So an address is only ever watched more than needed, never less.
   * Whether it was removed.
   */
  removeArchived(chainId: string, address: string, addressId: string, since: number): boolean {
    for (const [id, at] of this.restoredAt) if (at < since) this.restoredAt.delete(id);
    if (this.restoredAt.has(addressId) || this.lookup(chainId, address) !== addressId) return false;
    this.remove(chainId, address);
    return true;
  }

  /**
   * The address row id watched for this chain and address (canonical form), if any: the chain's
   * own row, else (in a group) the row of another chain of the group with that address, which a
   * transfer on this chain pays as a stray (PRODUCT §17).
   */
  lookup(chainId: string, address: string): string | undefined {
    return this.own.get(chainId)?.get(address) ?? this.byGroup.get(this.groupOf(chainId))?.get(address);
  }

  /**
   * The transfers that may pay a watched address of this chain: on a chain with watch keys, those
   * whose key a watched address has and those without a key; on another, those whose address text
   * a watched address may have. Only "maybe": confirm each with `lookup`.
   */
  mayWatch<T extends { watchKey?: Uint8Array; to: string }>(chainId: string, transfers: readonly T[]): readonly T[] {
    const group = this.groupOf(chainId);
    const keys = this.keyed.get(group);
    if (keys) return keys.filter.passHashed(transfers, watchKeyHash);
    const texts = this.texts.get(group);
    return texts === undefined ? [] : texts.passHashed(transfers, toHash);
  }

  /** Whether a watched address of this chain may have this watch key: always, on a chain without keys. */
  mayHaveKey(chainId: string, key: Uint8Array): boolean {
    return this.keyed.get(this.groupOf(chainId))?.filter.mayHave(key) ?? true;
  }

  /**
   * Whether a watched address of this chain may have this address text: on a chain without watch
   * keys, its text filter decides (a spend's sender screened as a transfer's recipient is); on a
   * keyed chain, always (the key screens). Only "maybe": confirm with `lookup`.
   */
  mayHaveText(chainId: string, address: string): boolean {
    const group = this.groupOf(chainId);
    if (this.keyed.has(group)) return true;
    const texts = this.texts.get(group);
    return texts !== undefined && texts.mayHaveHash(hashText(address));
  }

  /** The addresses watched on a chain (its group's, with its own), or on all. */
  size(chainId?: string): number {
    if (chainId !== undefined) return (this.byGroup.get(this.groupOf(chainId))?.size ?? 0) + (this.own.get(chainId)?.size ?? 0);
    let n = 0;
    for (const m of this.byGroup.values()) n += m.size;
    for (const m of this.own.values()) n += m.size;
    return n;
  }
}

/** 0 (no key: the transfer passes) or its key's hash. */
const watchKeyHash = (t: { watchKey?: Uint8Array }): number => (t.watchKey === undefined ? 0 : hashKey(t.watchKey));
const toHash = (t: { to: string }): number => hashText(t.to);

function addKey(keys: { keyOf: WatchKeyOf; filter: KeyFilter }, address: string): void {
  const key = keys.keyOf(address);
  if (key) keys.filter.add(key);
}

/**
 * A copy of `s` in one piece. An encoder that builds its result a character at a time (bech32,
 * base58) leaves a chain of string fragments, several times the memory of a copy in one piece
 * (docs/benchmarks.md, btc). ASCII only.
 */
const flat = (s: string): string => Buffer.from(s, 'latin1').toString('latin1');
