import type { EntityManager } from 'typeorm';
import { coinId, NATIVE_ASSET, type Catalog } from '../catalog/coins';
import { addressPath, receiveBranchPath, type AddressScheme, type KeyChain } from '../chains/derivation';
import { addressGroups } from '../chains/address-groups';
import { familyOf, type ChainFamily } from '../chains/families';
import type { WatchedAddresses } from '../chains/watched-addresses';
import type { ChainConfig } from '../config/schema';
import { AddressEntity, type AddressRow } from '../db/entities/chain';
import { WalletBranchEntity, WalletCounterEntity } from '../db/entities/wallet';
import { inList, insertRow, insertRowIfAbsent, placeholder, rawQuery, returning } from '../db/raw';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import { validationError } from '../shared/errors';
import { newTimeOrderedId, timeOrderedIdFloor } from '../shared/ids';
import type { AddressLookahead } from './address-lookahead';
import type { AddressAllocator, AllocateRequest } from './allocator';
import type { HdWallet } from './hd';

export interface AddressServiceDeps {
  store: Store;
  wallet: HdWallet;
  chains: readonly ChainConfig[];
  catalog: Catalog;
  watched: WatchedAddresses;
  clock: Clock;
  /** Addresses derived ahead on a worker thread (the daemon); without it each is derived inline. */
  lookahead?: AddressLookahead;
}

/** Rows per page when the watched set is filled at start. */
const LOAD_PAGE = 20000;
/**
 * How far back (by id time) loadWatched reads again on PostgreSQL: longer than an address's
 * transaction stays open, plus the clock difference between daemons sharing the database.
 */
const LOOKBACK_MS = 30_000;
/** How far ahead of this daemon's clock another daemon's ids are still read (its clock ahead). */
const AHEAD_MS = 24 * 3600_000;

/**
 * Deposit addresses (PRODUCT §6, §7): each merchant account has its own wallet branch (the BIP44
 * `account'` level), and on each chain its own index counter. Allocation runs in the caller's write
 * transaction: the branch, the counter step and the address row commit with the caller's rows or
 * not at all, so a committed index is never handed out again (a rolled-back one never existed).
 * The address is watched from the moment it is derived.
 */
export class AddressService implements AddressAllocator {
  private readonly chains = new Map<string, { chain: ChainConfig; scheme: AddressScheme; family: ChainFamily }>();
  /** The id after which loadWatched reads ('' before the first load). */
  private loadedFrom = '';
  /** When loadWatched last began (ms), for the restored static addresses it reads again. */
  private loadedAt: number | null = null;

  /** Chain id → its group of chains sharing addresses (addressGroups). */
  private readonly groups: Map<string, string>;

  constructor(private readonly deps: AddressServiceDeps) {
    this.groups = addressGroups(deps.chains);
    for (const chain of deps.chains) {
      const family = familyOf(chain.kind);
      this.chains.set(chain.id, { chain, scheme: family.addressScheme(chain), family });
    }
  }

  async allocate(em: EntityManager, req: AllocateRequest): Promise<AddressRow> {
    const coin = this.deps.catalog.coin(req.coinId);
    const chain = coin && this.chains.get(coin.chain_id);
    if (!coin || !chain) throw validationError('coin_id', 'unknown coin');
    if (req.purpose === 'change' && !chain.family.addresses.change) throw validationError('purpose', 'change addresses are for Bitcoin chains only');
    const branch = await this.branchOf(em, req.accountId);
    // Change comes from the internal chain (BIP44 change level 1), numbered on its own counter; the
    // lookahead derives the receive chain only (change is issued once a payout, not per invoice).
    const keyChain: KeyChain = req.purpose === 'change' ? 1 : 0;
    const index =
      keyChain === 0 && this.groups.has(chain.chain.id)
        ? await this.nextShared(em, chain.chain.id, req.accountId)
        : await this.next(em, `${keyChain === 1 ? 'change' : 'index'}:${chain.chain.id}:${req.accountId}`);
    const { wallet } = this.deps;
    await wallet.prepare(chain.scheme, branch, keyChain, em);
    const lookahead = keyChain === 0 ? this.deps.lookahead : undefined;
    const address = lookahead?.take(chain.chain.id, branch, index) ?? wallet.derive(chain.scheme, branch, index, keyChain).address;
    lookahead?.issuedUpTo(chain.chain.id, branch, index, () => wallet.branchPublicKey(chain.scheme, branch));
    // The store keeps (chain, path) unique; an address is a function of them, so one issued twice
    // means a derivation fault. The watched set holds every address: an entry there is checked
    // against the store (it may be a rolled-back allocation's, whose index is derived again now).
    // In a group of chains sharing addresses the entry may be another chain's row (issued before the
    // group shared its counter): only one of this chain is a fault.
    const watchedId = this.deps.watched.lookup(chain.chain.id, address);
    if (
      watchedId !== undefined &&
      (await rawQuery(em, `SELECT 1 FROM addresses WHERE id = ${placeholder(em, 1)} AND chain_id = ${placeholder(em, 2)}`, [watchedId, chain.chain.id]))
        .length > 0
    ) {
      throw new Error(`derivation fault: index ${index} of branch ${branch} on ${chain.chain.id} gives an address already issued`);
    }
    const path = addressPath(chain.scheme, branch, index, keyChain);
    const at = this.deps.clock.now();
    const now = iso(at);
    const row: AddressRow = {
      id: newTimeOrderedId(at.getTime()),
      account_id: req.accountId,
      chain_id: chain.chain.id,
      coin_id: coin.id,
      address,
      derivation_path: path,
      derivation_index: index,
      purpose: req.purpose,
      invoice_id: req.invoiceId ?? null,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    await insertRow(em, 'addresses', row);
    // Watched before commit: a payment can never be missed; a rolled-back allocation leaves an
    // entry whose lookup finds no row (the recorder ignores it) until the index is derived again.
    this.deps.watched.add(row.chain_id, row.address, row.id);
    return row;
  }

  /**
   * The account's treasury on an EVM or Tron chain (PRODUCT §8a): the first address of its
   * branch's internal chain (`…/branch'/1/0`), recorded (and watched) on first use in the caller's
   * transaction. Its (chain, path) is unique: two first uses at once record it once.
   */
  async treasury(em: EntityManager, accountId: string, chainId: string): Promise<AddressRow> {
    const chain = this.chains.get(chainId);
    if (!chain || !chain.family.addresses.treasuries) throw new Error(`${chainId} has no treasuries (not an EVM or Tron chain)`);
    const p = (i: number) => placeholder(em, i);
    const find = async () =>
      (
        await rawQuery<AddressRow>(em, `SELECT * FROM addresses WHERE account_id = ${p(1)} AND chain_id = ${p(2)} AND purpose = 'treasury'`, [
          accountId,
          chainId,
        ])
      )[0];
    const found = await find();
    if (found) return found;
    const branch = await this.branchOf(em, accountId);
    await this.deps.wallet.prepare(chain.scheme, branch, 1, em);
    const derived = this.deps.wallet.derive(chain.scheme, branch, TREASURY_INDEX, 1);
    const at = this.deps.clock.now();
    const row: AddressRow = {
      id: newTimeOrderedId(at.getTime()),
      account_id: accountId,
      chain_id: chainId,
      coin_id: coinId(chainId, NATIVE_ASSET),
      address: derived.address,
      derivation_path: derived.path,
      derivation_index: TREASURY_INDEX,
      purpose: 'treasury',
      invoice_id: null,
      status: 'active',
      created_at: iso(at),
      updated_at: iso(at),
    };
    const kept = (await insertRowIfAbsent(em, 'addresses', row)) ? row : (await find())!;
    this.deps.watched.add(chainId, kept.address, kept.id);
    return kept;
  }

  /**
   * The chain's gas station (PRODUCT §8a): the operator's address that pays the gas of sweeps and
   * token payouts, the first of the install's own branch (OPERATOR_BRANCH), which no account gets.
   */
  gasStation(chainId: string): { address: string; path: string } {
    const chain = this.chains.get(chainId);
    if (!chain || !chain.family.addresses.treasuries) throw new Error(`${chainId} is not an EVM or Tron chain`);
    return this.deps.wallet.derive(chain.scheme, OPERATOR_BRANCH, 0);
  }

  /**
   * The branch paths whose public keys the daemon keeps at hand (asked of the signer at start): the
   * operator's, and both chains of every branch handed out and of the next `ahead`, on every chain.
   */
  async branchPaths(ahead = 16): Promise<string[]> {
    const [row] = await rawQuery<{ next_value: number | string }>(
      this.deps.store.read,
      `SELECT next_value FROM wallet_counters WHERE name = ${placeholder(this.deps.store.read, 1)}`,
      [BRANCH_COUNTER],
    );
    const top = Number(row?.next_value ?? 0) + ahead;
    const paths = new Set<string>();
    for (const { scheme, family } of this.chains.values()) {
      if (family.addresses.treasuries) paths.add(receiveBranchPath(scheme, OPERATOR_BRANCH, 0));
      for (let b = 0; b < top; b++) for (const k of [0, 1] as const) paths.add(receiveBranchPath(scheme, b, k));
    }
    return [...paths];
  }

  /** The account's wallet branch, assigned on its first address. */
  async branchOf(em: EntityManager, accountId: string): Promise<number> {
    // Plain SQL: this runs on every allocation (the hot path of invoice creation).
    const found = await rawQuery<{ branch: number }>(em, `SELECT branch FROM wallet_branches WHERE account_id = ${placeholder(em, 1)}`, [accountId]);
    if (found.length > 0) return Number(found[0]!.branch);
    const branch = await this.next(em, BRANCH_COUNTER);
    // Two first allocations of one account at once (PostgreSQL): the second inserts nothing and
    // uses the first's branch; the number it drew stays unused.
    await em
      .createQueryBuilder()
      .insert()
      .into(WalletBranchEntity)
      .values({ account_id: accountId, branch, created_at: iso(this.deps.clock.now()) })
      .orIgnore()
      .execute();
    return (await em.findOneByOrFail(WalletBranchEntity, { account_id: accountId })).branch;
  }

  /**
   * Takes the next value of a counter in one statement (an atomic upsert on both dialects). The
   * row stays locked until the caller's transaction ends (PostgreSQL); SQLite's writes are
   * serialised by the store's write lock.
   */
  private async next(em: EntityManager, name: string): Promise<number> {
    const p = placeholder(em, 1);
    // The counter exists after its first use: a plain update then (an upsert tries the insert
    // first and pays for the conflict on every call); the upsert only for a counter's first step.
    const stepped = await returning<{ next_value: number | string }>(
      em,
      `UPDATE wallet_counters SET next_value = next_value + 1 WHERE name = ${p} RETURNING next_value`,
      [name],
    );
    if (stepped.length > 0) return Number(stepped[0]!.next_value) - 1;
    const rows = await rawQuery<{ next_value: number | string }>(
      em,
      `INSERT INTO wallet_counters (name, next_value) VALUES (${p}, 1) ` +
        `ON CONFLICT (name) DO UPDATE SET next_value = wallet_counters.next_value + 1 RETURNING next_value`,
      [name],
    );
    return Number(rows[0]!.next_value) - 1;
  }

  /**
   * The next deposit index of an account on a chain of a group sharing addresses (EVM): one counter
   * for the group, so an address is issued for one chain only and a payment on another chain of the
   * group is a stray of that address, never another invoice's payment. Its first step starts after
   * the highest index the group's chains' own counters (before the group shared one) handed out.
   */
  private async nextShared(em: EntityManager, chainId: string, accountId: string): Promise<number> {
    const group = this.groups.get(chainId)!;
    const name = `index:${group}:${accountId}`;
    const p = (i: number) => placeholder(em, i);
    const stepped = await returning<{ next_value: number | string }>(
      em,
      `UPDATE wallet_counters SET next_value = next_value + 1 WHERE name = ${p(1)} RETURNING next_value`,
      [name],
    );
    if (stepped.length > 0) return Number(stepped[0]!.next_value) - 1;
    const members = [...this.groups].filter(([, g]) => g === group).map(([id]) => `index:${id}:${accountId}`);
    const list = inList(em, members, 1);
    const [old] = await rawQuery<{ top: number | string | null }>(em, `SELECT MAX(next_value) AS top FROM wallet_counters WHERE name ${list.sql}`, list.params);
    const start = Number(old?.top ?? 0);
    const rows = await rawQuery<{ next_value: number | string }>(
      em,
      `INSERT INTO wallet_counters (name, next_value) VALUES (${p(1)}, ${p(2)}) ` +
        `ON CONFLICT (name) DO UPDATE SET next_value = wallet_counters.next_value + 1 RETURNING next_value`,
      [name, start + 1],
    );
    return Number(rows[0]!.next_value) - 1;
  }

  /** The address of a branch and index on a chain, without recording anything (tools, tests). */
  derive(chainId: string, branch: number, index: number): { address: string; path: string } {
    const chain = this.chains.get(chainId);
    if (!chain) throw new Error(`unknown chain ${chainId}`);
    return this.deps.wallet.derive(chain.scheme, branch, index);
  }

  /** The account's wallet branch; null before its first address. */
  async branchFor(accountId: string): Promise<number | null> {
    return (await this.deps.store.read.findOneBy(WalletBranchEntity, { account_id: accountId }))?.branch ?? null;
  }

  /**
   * Fills the watched set from the addresses table: at start every row, then (called again) the
   * rows added since, which on a shared database includes those other daemons issued. Returns how
   * many rows were read.
   */
  async loadWatched(): Promise<number> {
    const { store } = this.deps;
    const startedAt = this.deps.clock.now().getTime();
    // After the first load, only time-ordered ids near now: addresses issued before ids were
    // time-ordered have random ones, most of which sort above any of today's.
    const before = this.loadedFrom === '' ? null : timeOrderedIdFloor(startedAt + AHEAD_MS);
    let last = this.loadedFrom;
    let n = 0;
    for (;;) {
      // Raw rows (no entity hydration): a million addresses load in a few seconds.
      const query = store.read
        .createQueryBuilder(AddressEntity, 'a')
        .select(['a.id AS id', 'a.chain_id AS chain_id', 'a.address AS address'])
        .where('a.id > :last', { last })
        // Archived static addresses are the slow scan's (ArchivedScan), not the real-time scan's.
        .andWhere("a.status = 'active'");
      if (before !== null) query.andWhere('a.id < :before', { before });
      const rows: Array<{ id: string; chain_id: string; address: string }> = await query.orderBy('a.id', 'ASC').limit(LOAD_PAGE).getRawMany();
      for (const r of rows) if (this.deps.watched.lookup(r.chain_id, r.address) !== r.id) this.deps.watched.add(r.chain_id, r.address, r.id);
      n += rows.length;
      if (rows.length < LOAD_PAGE) break;
      last = rows[rows.length - 1]!.id;
    }
    // Ids are time-ordered, but a row may commit after rows with later ids (another daemon's
    // transaction still open, or its clock a little behind): the next call reads again the ids of
    // the last LOOKBACK_MS (none on SQLite, where this daemon is the only one and watches its own
    // addresses before they commit).
    const lookback = store.dialect === 'postgres' ? LOOKBACK_MS : 0;
    // Static addresses another daemon restored or archived since the last call (their rows are not
    // new; the change stamps their updated_at): a restored one is watched again, an archived one
    // leaves the real-time scan (the slow scan has it from the height its archive recorded).
    if (this.loadedAt !== null && lookback > 0) {
      const changed: Array<{ id: string; chain_id: string; address: string; status: string }> = await store.read
        .createQueryBuilder(AddressEntity, 'a')
        .select(['a.id AS id', 'a.chain_id AS chain_id', 'a.address AS address', 'a.status AS status'])
        .where("a.purpose = 'static' AND a.updated_at >= :since", { since: iso(new Date(this.loadedAt - lookback)) })
        .getRawMany();
      for (const r of changed) {
        if (r.status === 'active') {
          if (this.deps.watched.lookup(r.chain_id, r.address) !== r.id) this.deps.watched.add(r.chain_id, r.address, r.id);
        } else this.deps.watched.removeArchived(r.chain_id, r.address, r.id, startedAt - lookback);
      }
      n += changed.length;
    }
    this.loadedAt = startedAt;
    this.loadedFrom = timeOrderedIdFloor(startedAt - lookback);
    return n;
  }
}

/** A treasury is index 0 of its account's internal chain (…/branch'/1/0). */
export const TREASURY_INDEX = 0;

/**
 * The install's own wallet branch (the last hardened BIP44 account): the gas stations' keys. The
 * branch counter numbers merchant accounts from 0 and never reaches it.
 */
export const OPERATOR_BRANCH = 0x7fffffff;

/** The counter that numbers wallet branches (the BIP44 account level). */
export const BRANCH_COUNTER = 'branch';

/**
 * Moves the next wallet branch up to at least `first` (never down): after a restore from the words
 * alone, new accounts then start above the branches the lost database had handed out.
 */
export async function skipBranchesTo(store: Store, first: number): Promise<number> {
  return store.write(async (em) => {
    await em.createQueryBuilder().insert().into(WalletCounterEntity).values({ name: BRANCH_COUNTER, next_value: 0 }).orIgnore().execute();
    const row = await em.findOneByOrFail(WalletCounterEntity, { name: BRANCH_COUNTER });
    if (row.next_value < first) await em.update(WalletCounterEntity, { name: BRANCH_COUNTER }, { next_value: first });
    return Math.max(row.next_value, first);
  });
}
