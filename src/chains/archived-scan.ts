import type { Catalog, Coin } from '../catalog/coins';
import type { ChainConfig } from '../config/schema';
import { inList, placeholder, rawQuery, rawRun } from '../db/raw';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { Amount } from '../shared/amount';
import { cursorHeight } from './archived-addresses';
import type { TransferRecorder } from './transfer-recorder';
import { StateUnavailable, type BlockRef, type ChainReader, type IncomingObservation, type NormalisedBlock } from './types';
import { WatchedAddresses } from './watched-addresses';

/** One archived (or lately restored) address as the slow scan reads it. */
interface ScanRow {
  address_id: string;
  address: string;
  checked_height: number;
  rewatched_height: number | null;
  /** JSON: coin id → base units, the node balances at `checked_height` (families with balancesAt); null before the first check. */
  balances: string | null;
}

/** Addresses per balancesAt call (each asks for every coin of the chain). */
const BALANCE_CHUNK = 2000;
/** No balance in any coin. */
const NONE: Readonly<Record<string, string>> = Object.freeze({});
/** Values per IN list: far below any database's bound-parameter limit. */
const IN_CHUNK = 500;

export interface ArchivedScanDeps {
  chain: ChainConfig;
  adapter: ChainReader;
  store: Store;
  recorder: TransferRecorder;
  /** The real-time watched set: addresses whose restore the slow scan has covered are made sure to be in it. */
  watched: WatchedAddresses;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
}

/** What one round did. */
export interface ArchivedScanRound {
  /** Addresses checked. */
  checked: number;
  /** Addresses whose blocks were read (balance moved, or a family without balances). */
  flagged: number;
  /** Blocks read. */
  blocks: number;
  /** Transfers recorded (new or already known). */
  found: number;
}

/**
 * The slow scan of one chain's archived static addresses (SPEC "Static address": archived addresses
 * leave real-time scanning and are checked every `archived_scan_hours`). Each round looks at the
 * blocks the chain core has scanned since the addresses' last check, up to the core's cursor (never
 * beyond: there the core's reorganisation handling covers what is recorded). A family whose node
 * answers past balances (EVM) first compares each address's balances at the cursor with those seen
 * at its last check (at the first check, with what the books recorded) and reads blocks only when
 * one moved; Bitcoin and Tron read the blocks for every archived address's scripts. A transfer found
 * is handed to the same TransferRecorder as the real-time scan's, so it is recorded once by its
 * unique key, credited through the money owner, and makes the address active again (through the
 * deposit handler). The core then confirms it, and reverts it on a reorganisation, like any other.
 */
export class ArchivedScan {
  readonly chainId: string;
  private readonly coinByAsset = new Map<string, Coin>();
  private readonly log: Logger;

  constructor(private readonly deps: ArchivedScanDeps) {
    this.chainId = deps.chain.id;
    for (const coin of deps.catalog.coins()) if (coin.chain_id === this.chainId) this.coinByAsset.set(coin.asset, coin);
    this.log = deps.logger.child({ chain: this.chainId, component: 'archived-scan' });
  }

  /**
   * A round when the chain's last one (as the database says) is `periodMs` old or more, and this
   * daemon holds the chain's slow-scan role (one daemon at a time on a shared database); else null.
   */
  async runIfDue(periodMs: number, signal?: AbortSignal): Promise<ArchivedScanRound | null> {
    const em = this.deps.store.read;
    const [last] = await rawQuery<{ ran_at: string }>(em, `SELECT ran_at FROM archived_scan_runs WHERE chain_id = ${placeholder(em, 1)}`, [this.chainId]);
    if (last && this.deps.clock.now().getTime() - Date.parse(last.ran_at) < periodMs) return null;
    if (!(await this.deps.store.roles.hold(`archived-scan:${this.chainId}`))) return null;
    return this.run(signal);
  }

  /** One round now. */
  async run(signal?: AbortSignal): Promise<ArchivedScanRound> {
    const { store, clock } = this.deps;
    const round: ArchivedScanRound = { checked: 0, flagged: 0, blocks: 0, found: 0 };
    const startedAt = iso(clock.now());
    const cursor = await this.cursor();
    if (!cursor) return round;
    const seen = new Map<string, Record<string, string>>();
    const rows: ScanRow[] = [];
    const flagged = this.deps.adapter.balancesAt ? await this.moved(cursor.height, rows, seen, signal) : await this.allRows(cursor.height, rows);
    round.checked = rows.length;
    if (rows.length === 0) return this.finish(round, cursor, [], startedAt, new Map());
    round.flagged = flagged.length;
    const observations = flagged.length > 0 ? await this.find(flagged, cursor, round, signal) : [];
    round.found = observations.length;
    return this.finish(round, cursor, rows, startedAt, seen, observations);
  }

  /** Records what was found and moves every checked address's height to the cursor, in one transaction. */
  private async finish(
    round: ArchivedScanRound,
    cursor: BlockRef,
    rows: ScanRow[],
    startedAt: string,
    seen: Map<string, Record<string, string>>,
    observations: IncomingObservation[] = [],
  ): Promise<ArchivedScanRound> {
    const { store, clock } = this.deps;
    const margin = this.deps.chain.watch.batch_size;
    const covered = rows.filter((r) => r.rewatched_height !== null && r.rewatched_height + margin <= cursor.height);
    await store.write(async (em) => {
      const p = (i: number) => placeholder(em, i);
      // The cursor block is still the chain's as the core keeps it: no reorganisation since it was read.
      const [stored] = await rawQuery<{ hash: string }>(em, `SELECT hash FROM chain_blocks WHERE chain_id = ${p(1)} AND height = ${p(2)}`, [
        this.chainId,
        cursor.height,
      ]);
      if (stored && stored.hash !== cursor.hash)
        throw new Error(`block ${cursor.height} was reorganised away during the slow scan; retrying at the next round`);
      const now = iso(clock.now());
      // Balances seen, grouped by value: at an address's first check most are none at all ('{}').
      const byValue = new Map<string, string[]>();
      for (const [id, balances] of seen) {
        const value = JSON.stringify(balances);
        const ids = byValue.get(value);
        if (ids) ids.push(id);
        else byValue.set(value, [id]);
      }
      for (const [value, ids] of byValue) {
        for (let i = 0; i < ids.length; i += IN_CHUNK) {
          const list = inList(em, ids.slice(i, i + IN_CHUNK), 2);
          await rawRun(em, `UPDATE archived_scans SET balances = ${p(1)} WHERE address_id ${list.sql}`, [value, ...list.params]);
        }
      }
      // Rows written since the round began (an archive meanwhile) keep their own height.
      await rawRun(
        em,
        `UPDATE archived_scans SET checked_height = ${p(1)}, updated_at = ${p(2)} WHERE chain_id = ${p(3)} AND checked_height < ${p(4)} AND updated_at < ${p(5)}`,
        [cursor.height, now, this.chainId, cursor.height, startedAt],
      );
      // After the heights moved: an address this restores keeps the height it was checked to.
      if (observations.length > 0) {
        await this.deps.recorder.observeAll(em, observations, this.deps.chain.confirmations);
        // The core may have scanned past the round's cursor meanwhile, promoting before these rows
        // existed: promote them to its cursor now, or they would wait pending for its next block.
        // Under a quorum the core promotes by agreed heights, which only it knows.
        if (this.deps.chain.nodes.quorum <= 1) {
          const scanned = await cursorHeight(em, this.chainId);
          if (scanned > cursor.height) await this.deps.recorder.promote(em, this.chainId, scanned, this.deps.chain.confirmations);
        }
      }
      await rawRun(em, `INSERT INTO archived_scan_runs (chain_id, ran_at) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (chain_id) DO UPDATE SET ran_at = ${p(3)}`, [
        this.chainId,
        startedAt,
        startedAt,
      ]);
      for (let i = 0; i < covered.length; i += IN_CHUNK) {
        const list = inList(
          em,
          covered.slice(i, i + IN_CHUNK).map((r) => r.address_id),
          2,
        );
        await rawRun(em, `DELETE FROM archived_scans WHERE rewatched_height IS NOT NULL AND updated_at < ${p(1)} AND address_id ${list.sql}`, [
          startedAt,
          ...list.params,
        ]);
      }
    });
    // Restored addresses the slow scan no longer covers: the real-time scan has them (also one
    // whose restore raced with its archive's removal from the watched set).
    for (const r of covered) this.deps.watched.add(this.chainId, r.address, r.address_id);
    if (round.found > 0) this.log.info('transfers to archived addresses found', { ...round, height: cursor.height });
    return round;
  }

  /** The chain core's cursor as the database holds it; null before it exists. */
  private async cursor(): Promise<BlockRef | null> {
    const em = this.deps.store.read;
    const [row] = await rawQuery<{ height: number | string; hash: string | null }>(
      em,
      `SELECT height, hash FROM chain_cursors WHERE chain_id = ${placeholder(em, 1)}`,
      [this.chainId],
    );
    return row && row.hash !== null ? { height: Number(row.height), hash: row.hash } : null;
  }

  /** Every row of the round into `into` (families without balances read blocks for all of them); `into`. */
  private async allRows(height: number, into: ScanRow[]): Promise<ScanRow[]> {
    let page = await this.page(height, null);
    for (;;) {
      into.push(...page);
      if (page.length < BALANCE_CHUNK) return into;
      page = await this.page(height, page[page.length - 1]!.address_id);
    }
  }

  /** A round's rows after address id `after` (null: from the first), BALANCE_CHUNK of them in address-id order. */
  private async page(height: number, after: string | null): Promise<ScanRow[]> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    // One table, the columns a round needs (100,000 rows a round: `npm run bench addresses`), through its (chain_id, address_id) index.
    const rows = await rawQuery<ScanRow>(
      em,
      `SELECT address_id, address, checked_height, rewatched_height, balances FROM archived_scans
       WHERE chain_id = ${p(1)} AND address_id > ${p(2)} AND (checked_height < ${p(3)} OR rewatched_height IS NOT NULL)
       ORDER BY address_id LIMIT ${BALANCE_CHUNK}`,
      [this.chainId, after ?? '', height],
    );
    // PostgreSQL answers bigint columns as text.
    for (const r of rows) {
      if (typeof r.checked_height !== 'number') r.checked_height = Number(r.checked_height);
      if (r.rewatched_height !== null && typeof r.rewatched_height !== 'number') r.rewatched_height = Number(r.rewatched_height);
    }
    return rows;
  }

  /**
   * The addresses whose balance in a coin of the chain differs at `height` from what was seen at
   * their last check (at their first check, from what the incoming transfers recorded in the books
   * add up to), the round's rows read into `rows` a page at a time: a page's balances are asked of
   * the node while the next page and its books are read, and compared while the node answers for
   * the next. Fills `seen` with the balances at `height` to store once the round commits: those
   * that moved, and every first check's (later rounds then compare with them, not the books).
   */
  private async moved(height: number, rows: ScanRow[], seen: Map<string, Record<string, string>>, signal?: AbortSignal): Promise<ScanRow[]> {
    const coins = [...this.coinByAsset.values()];
    const assets = coins.map((c) => c.asset);
    // The height balances are read at; null once the node said it keeps no state there (see below).
    let at: number | null = height;
    const ask = (chunk: ScanRow[]): Promise<bigint[][]> | null => {
      if (chunk.length === 0) return null;
      const asking = this.deps.adapter.balancesAt!(
        chunk.map((r) => r.address),
        assets,
        at,
        signal,
      );
      // Its failure is met where it is awaited (never an unhandled rejection meanwhile).
      asking.catch(() => undefined);
      return asking;
    };
    const out: ScanRow[] = [];
    let chunk = await this.page(height, null);
    let asking = ask(chunk);
    while (asking) {
      rows.push(...chunk);
      const next = chunk.length < BALANCE_CHUNK ? [] : await this.page(height, chunk[chunk.length - 1]!.address_id);
      const books = await this.booked(chunk.filter((r) => r.balances === null).map((r) => r.address_id));
      let balances: bigint[][];
      try {
        balances = await asking;
      } catch (err) {
        if (!(err instanceof StateUnavailable) || at === null) throw err;
        // A node without archive state, the scan behind its newest 128 blocks: the newest balances
        // stand in (docs/decisions.md "archived scan without archive state").
        this.log.info('the node keeps no state at the scanned height: balances read at its newest block', { height });
        at = null;
        balances = (await ask(chunk))!;
      }
      asking = ask(next);
      // 100,000 addresses a round, nearly all unchanged and empty: no object is made for those.
      for (let k = 0; k < chunk.length; k++) {
        const r = chunk[k]!;
        const now = balances[k]!;
        const before: Record<string, string> =
          r.balances === null ? (books.get(r.address_id) ?? NONE) : r.balances === '{}' ? NONE : (JSON.parse(r.balances) as Record<string, string>);
        let changed = false;
        for (let j = 0; j < coins.length && !changed; j++) {
          const was = before[coins[j]!.id];
          changed = now[j] === 0n ? was !== undefined && was !== '0' : was !== now[j]!.toString();
        }
        if (changed) out.push(r);
        // Unchanged balances stay as they are stored; balances of another height than the scanned
        // one are never stored as its own: the address is compared again at the next round.
        if ((!changed && r.balances !== null) || (changed && at === null)) continue;
        const seenNow: Record<string, string> = {};
        coins.forEach((c, j) => {
          if (now[j] !== 0n) seenNow[c.id] = now[j]!.toString();
        });
        seen.set(r.address_id, seenNow);
      }
      chunk = next;
    }
    return out;
  }

  /** Per address, the base units its incoming transfers recorded so far (not reverted) add up to, per coin. */
  private async booked(ids: string[]): Promise<Map<string, Record<string, string>>> {
    const em = this.deps.store.read;
    const out = new Map<string, Record<string, string>>();
    const decimals = new Map([...this.coinByAsset.values()].map((c) => [c.id, c.decimals]));
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const list = inList(em, ids.slice(i, i + IN_CHUNK), 1);
      const rows = await rawQuery<{ address_id: string; coin_id: string; amount: string }>(
        em,
        `SELECT address_id, coin_id, amount FROM chain_transfers WHERE address_id ${list.sql} AND direction = 'incoming' AND status <> 'reverted'`,
        list.params,
      );
      for (const r of rows) {
        const d = decimals.get(r.coin_id);
        if (d === undefined) continue;
        const sums = out.get(r.address_id) ?? {};
        sums[r.coin_id] = (BigInt(sums[r.coin_id] ?? '0') + Amount.of(r.amount).toBaseUnits(d)).toString();
        out.set(r.address_id, sums);
      }
    }
    return out;
  }

  /**
   * The transfers to `flagged` addresses in the blocks after each one's last check, up to the
   * cursor, read in the core's batch size. The blocks must link up to the cursor block: otherwise
   * the chain changed meanwhile and the next round reads again.
   */
  private async find(flagged: ScanRow[], cursor: BlockRef, round: ArchivedScanRound, signal?: AbortSignal): Promise<IncomingObservation[]> {
    const set = new WatchedAddresses();
    const { adapter } = this.deps;
    if (adapter.watchKey) set.keyBy(this.chainId, (address) => adapter.watchKey!(address));
    const since = new Map<string, number>();
    for (const r of flagged) {
      set.add(this.chainId, r.address, r.address_id);
      since.set(r.address, r.checked_height);
    }
    const from = Math.min(...flagged.map((r) => r.checked_height)) + 1;
    const out: IncomingObservation[] = [];
    let parent: string | null = null;
    let last: NormalisedBlock | undefined;
    for (let start = from; start <= cursor.height; start += this.deps.chain.watch.batch_size) {
      signal?.throwIfAborted();
      const end = Math.min(cursor.height, start + this.deps.chain.watch.batch_size - 1);
      const blocks = await adapter.blocks(start, end, signal);
      if (blocks.length !== end - start + 1) throw new Error(`the node returned blocks other than ${start}..${end}`);
      for (const block of blocks) {
        if (parent !== null && block.parentHash !== parent)
          throw new Error(`the chain changed at height ${block.height} during the slow scan; retrying at the next round`);
        parent = block.hash;
        last = block;
        for (const t of set.mayWatch(this.chainId, block.transfers)) {
          const addressId = set.lookup(this.chainId, t.to);
          if (addressId === undefined || block.height <= since.get(t.to)!) continue;
          const coin = this.coinByAsset.get(t.asset);
          if (!coin || t.amount <= 0n) continue;
          out.push({
            chainId: this.chainId,
            coinId: coin.id,
            txid: t.txid,
            index: t.index,
            address: t.to,
            addressId,
            amount: Amount.fromBaseUnits(t.amount, coin.decimals).toString(),
            blockHeight: block.height,
            blockHash: block.hash,
            confirmations: cursor.height - block.height + 1,
          });
        }
      }
      round.blocks += blocks.length;
    }
    if (last && last.hash !== cursor.hash) throw new Error(`block ${cursor.height} changed during the slow scan; retrying at the next round`);
    return out;
  }
}
