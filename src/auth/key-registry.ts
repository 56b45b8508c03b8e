import { AccountEntity, type AccountRow } from '../db/entities/team';
import { ApiKeyEntity, type ApiKeyRow } from '../db/entities/auth';
import type { Sealer } from '../db/seal';
import { cells } from '../db/sealed-values';
import type { Store } from '../db/store';
import { whitelistMatcher } from './ip-match';
import { macKey, type MacKey } from './hmac';

/** What authentication needs of a key: the row, its open secrets and its account's state. */
export interface KeyEntry {
  row: ApiKeyRow;
  /** The key's account as stored when the entry was made (null: none). */
  account: AccountRow | null;
  accountStatus: string;
  secret: string;
  previousSecret: string | null;
  previousValidUntilMs: number;
  /** The secrets made ready for HMAC (see macKey). */
  mac: MacKey;
  previousMac: MacKey | null;
  permissions: Set<string>;
  ipWhitelist: string[];
  /** The whitelist, compiled: whether a client address may use the key. */
  allowsIp: (ip: string) => boolean;
}

/**
 * Keys by key id, with their secrets opened once and kept in memory. Every change to a key or an
 * account goes through services that call `invalidate`, so on a single daemon the cache is
 * exact; with PostgreSQL shared by several daemons an entry lives at most `ttlMs`.
 */
export class KeyRegistry {
  private readonly cache = new Map<string, { entry: KeyEntry | null; at: number }>();

  constructor(
    private readonly store: Store,
    private readonly sealer: Sealer,
    private readonly nowMs: () => number,
    private readonly ttlMs: number,
  ) {}

  /** Whether a cached entry is the stored key itself (one daemon: entries never expire, every change invalidates them). */
  get exact(): boolean {
    return this.ttlMs === Number.POSITIVE_INFINITY;
  }

  /** The entry when the cache holds it fresh (null: no such key), else undefined: then ask `get`. */
  cached(keyId: string): KeyEntry | null | undefined {
    const hit = this.cache.get(keyId);
    // Entries that never expire (one daemon) need no clock read.
    return hit && (this.ttlMs === Number.POSITIVE_INFINITY || this.nowMs() - hit.at < this.ttlMs) ? hit.entry : undefined;
  }

  async get(keyId: string): Promise<KeyEntry | null> {
    const hit = this.cached(keyId);
    if (hit !== undefined) return hit;
    const entry = await this.load(keyId);
    if (this.cache.size > 50_000) this.cache.clear();
    this.cache.set(keyId, { entry, at: this.nowMs() });
    return entry;
  }

  invalidate(): void {
    this.cache.clear();
  }

  private async load(keyId: string): Promise<KeyEntry | null> {
    const row = await this.store.read.findOneBy(ApiKeyEntity, { key_id: keyId });
    if (!row) return null;
    const account = await this.store.read.findOneBy(AccountEntity, { id: row.account_id });
    const ipWhitelist = JSON.parse(row.ip_whitelist) as string[];
    const secret = this.sealer.open(row.secret_sealed, cells.keySecret(row.id));
    const previousSecret = row.previous_secret_sealed ? this.sealer.open(row.previous_secret_sealed, cells.keyPreviousSecret(row.id)) : null;
    return {
      row,
      account,
      accountStatus: account?.status ?? 'frozen',
      secret,
      previousSecret,
      mac: macKey(secret),
      previousMac: previousSecret === null ? null : macKey(previousSecret),
      previousValidUntilMs: row.previous_secret_valid_until ? Date.parse(row.previous_secret_valid_until) : 0,
      permissions: new Set(row.permissions.split(',').filter(Boolean)),
      ipWhitelist,
      allowsIp: whitelistMatcher(ipWhitelist),
    };
  }
}
