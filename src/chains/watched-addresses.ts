import { hashKey, hashText, KeyFilter } from './key-filter';

/** A family's watch key of an address (see ChainAdapter.watchKey); null for one it cannot pay. */
export type WatchKeyOf = (address: string) => Uint8Array | null;

/**
 * The addresses the core watches, per chain, in memory: loaded at start and kept current as
 * addresses are derived, so a transfer to an unknown address costs one map lookup and no I/O.
 * Values are address row ids; the row itself is read only on a hit. Each chain also has a KeyFilter
 * that screens its blocks' transfers before any lookup: of the watch keys, for a family that gives
 * them (the address text is then built and looked up only for the few that pass), else of the
 * address texts' hashes. A lookup in a map of a million strings misses the CPU's caches three or
 * four times (a bucket, an entry, the key string it compares); a probe of the filter once, and
 * probes in a row overlap their misses (docs/benchmarks.md, chains).
 */
export class WatchedAddresses {
  private readonly byChain = new Map<string, Map<string, string>>();
  private readonly keyed = new Map<string, { keyOf: WatchKeyOf; filter: KeyFilter }>();
  /** The hashes of the addresses of each chain not keyed (yet): dropped once the chain is. */
  private readonly texts = new Map<string, KeyFilter>();
  /** Static addresses this daemon made active again lately: address row id → when (ms). */
  private readonly restoredAt = new Map<string, number>();

  add(chainId: string, address: string, addressId: string): void {
    let m = this.byChain.get(chainId);
    if (!m) this.byChain.set(chainId, (m = new Map()));
    // The id too: a new UUIDv7 is built by concatenation (about 420 bytes an entry otherwise).
    m.set(flat(address), flat(addressId));
    const keys = this.keyed.get(chainId);
    if (keys) return addKey(keys, address);
    let texts = this.texts.get(chainId);
    if (!texts) this.texts.set(chainId, (texts = new KeyFilter()));
    texts.addHash(hashText(address));
  }

  /**
   * From now on this chain's addresses are also screened by `keyOf` (its adapter's watch key);
   * the addresses already watched are keyed at once. A chain's watch key is its family's and never
   * changes: a second call (a watcher built again for the chain) keeps the first.
   */
  keyBy(chainId: string, keyOf: WatchKeyOf): void {
    if (this.keyed.has(chainId)) return;
    const keys = { keyOf, filter: new KeyFilter() };
    for (const address of this.byChain.get(chainId)?.keys() ?? []) addKey(keys, address);
    this.keyed.set(chainId, keys);
    this.texts.delete(chainId);
  }

  remove(chainId: string, address: string): void {
    this.byChain.get(chainId)?.delete(address);
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

  /** The address row id watched for this chain and address (canonical form), if any. */
  lookup(chainId: string, address: string): string | undefined {
    return this.byChain.get(chainId)?.get(address);
  }

  /**
   * The transfers that may pay a watched address of this chain: on a chain with watch keys, those
   * whose key a watched address has and those without a key; on another, those whose address text
   * a watched address may have. Only "maybe": confirm each with `lookup`.
   */
  mayWatch<T extends { watchKey?: Uint8Array; to: string }>(chainId: string, transfers: readonly T[]): readonly T[] {
    const keys = this.keyed.get(chainId);
    if (keys) return keys.filter.passHashed(transfers, watchKeyHash);
    const texts = this.texts.get(chainId);
    return texts === undefined ? [] : texts.passHashed(transfers, toHash);
  }

  /** Whether a watched address of this chain may have this watch key: always, on a chain without keys. */
  mayHaveKey(chainId: string, key: Uint8Array): boolean {
    return this.keyed.get(chainId)?.filter.mayHave(key) ?? true;
  }

  /**
   * Whether a watched address of this chain may have this address text: on a chain without watch
   * keys, its text filter decides (a spend's sender screened as a transfer's recipient is); on a
   * keyed chain, always (the key screens). Only "maybe": confirm with `lookup`.
   */
  mayHaveText(chainId: string, address: string): boolean {
    if (this.keyed.has(chainId)) return true;
    const texts = this.texts.get(chainId);
    return texts !== undefined && texts.mayHaveHash(hashText(address));
  }

  size(chainId?: string): number {
    if (chainId !== undefined) return this.byChain.get(chainId)?.size ?? 0;
    let n = 0;
    for (const m of this.byChain.values()) n += m.size;
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
