import { MoreThan, MoreThanOrEqual, Not, type EntityManager } from 'typeorm';
import type { Catalog, Coin } from '../catalog/coins';
import type { ChainConfig } from '../config/schema';
import { ChainTransferEntity } from '../db/entities/chain';
import { ChainBlockEntity, ChainCursorEntity, type ChainBlockRow } from '../db/entities/chain-scan';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { Amount } from '../shared/amount';
import { MempoolTracker } from './mempool-tracker';
import { alignedPollDelayMs } from './poll-timing';
import { createCursor, insertHeaders, moveCursor, pruneHeaders, type ScanPoint } from './scan-rows';
import { transferKey, type TransferRecorder } from './transfer-recorder';
import { spendObservations, transferKeys } from './block-transfers';
import { NodeFault, NodeStale, type BlockRef, type ChainReader, type IncomingObservation, type NormalisedBlock, type NormalisedTransfer } from './types';
import type { WalletCoins } from './wallet-coins';
import type { WatchedAddresses } from './watched-addresses';

/** One chain's line of `coinkeep status`. */
export interface ChainStatus {
  chain_id: string;
  kind: ChainConfig['kind'];
  node_tip: number | null;
  scanned_height: number | null;
  lag: number | null;
  /** The chain's coins are in maintenance: node unreachable or stalled, or scanning stopped. */
  maintenance: boolean;
  /** Why the coins are in maintenance (what `coinkeep status` and the dashboard show); null when they are not. */
  maintenance_reason: string | null;
  /**
   * This daemon scans the chain. False: another daemon on the same database does (or nobody yet),
   * and `scanned_height` is that daemon's progress as the database shows it.
   */
  scanning: boolean;
  last_error: string | null;
  last_error_at: string | null;
  last_poll_at: string | null;
}

/** The last scanned block; `hash` null only before the genesis block. */
type Cursor = ScanPoint;

/** Another daemon moved the chain's cursor since this one read it: this daemon's scan is void. */
class CursorMoved extends Error {}

export interface ChainWatcherDeps {
  chain: ChainConfig;
  adapter: ChainReader;
  store: Store;
  recorder: TransferRecorder;
  watched: WatchedAddresses;
  coins: WalletCoins;
  catalog: Catalog;
  clock: Clock;
  logger: Logger;
  /**
   * Adds to `watched` the addresses other daemons on the same database issued since the last call
   * (this daemon's own are watched as they are issued). Called after blocks are read and before
   * they are recorded: an address is paid only after it was issued, so every address a block can
   * pay is watched by then.
   */
  learnAddresses?: () => Promise<unknown>;
  /** The node's pushed new heads (EVM `ws_url`), when configured: each wakes the scanner (see onNewHead). */
  heads?: HeadSource;
}

/** New heads a node pushes: hints that wake the scanner, never recorded. */
export interface HeadSource {
  /** `onHead` for each head pushed, or with null when heads may have been missed (a subscription made again). */
  start(onHead: (head: { height: number; hash: string } | null) => void): void;
  stop(): void;
  /** Each tip a poll read (the truth), so the source can tell a push that went silent. */
  polledTip?(height: number): void;
}

/**
 * The one chain core, for one chain (ARCHITECTURE "One chain core"). Each poll reads the node's tip,
 * fetches the blocks after the cursor in batches, records the transfers to watched addresses through
 * the TransferRecorder and promotes the ones deep enough; the cursor, the block headers, the
 * transfers and (through the router) the credits of a batch commit in one transaction, so a crash at
 * any point resumes after the last committed batch and a rescan is harmless. A parent hash that
 * does not match walks back to the fork point and replays the new branch. Node trouble puts the
 * chain's coins in maintenance until a poll succeeds again.
 *
 * With several daemons on one database, one of them scans the chain (its scanner role, see
 * RoleLock) and the others follow what it records; when it dies another takes the role and goes on
 * from the cursor in the database. Each scan's transaction moves the cursor from where this daemon
 * read it first (moveCursor), so two daemons that both believe they scan never record a block twice.
 */
export class ChainWatcher {
  readonly chainId: string;
  private readonly coinByAsset = new Map<string, Coin>();
  private readonly log: Logger;
  /** The committed cursor: it changes only after its transaction commits. */
  private cursor: Cursor | undefined;
  private nodeTip: BlockRef | undefined;
  private tipChangedAt: number | undefined;
  /** Why the last poll failed; null once one succeeds. */
  private trouble: string | null = null;
  /** The trouble puts the coins in maintenance at once (another network, a node behind, a stall), not after maintenance_after_seconds. */
  private troubleAtOnce = false;
  /** When a poll last succeeded (ms); null before the first. */
  private lastGoodAt: number | null = null;
  /**
   * With a quorum above 1: the highest scanned height whose hash enough endpoints report (blocks
   * above it count toward no confirmation yet); null with a quorum of 1, where the cursor decides.
   */
  private agreed: number | null = null;
  /** Set by a reorganisation deeper than reorg_max_depth: scanning stops until restart. */
  private halted: string | null = null;
  private inMaintenance = false;
  private lastError: { message: string; at: Date } | null = null;
  private lastPollAt: Date | null = null;
  private readonly mempool: MempoolTracker;
  /** This daemon holds the chain's scanner role. */
  private scanning = false;
  /** The stored headers reach reorg_max_depth below the cursor (see fillHeaders). */
  private headersFull = false;

  constructor(private readonly deps: ChainWatcherDeps) {
    this.chainId = deps.chain.id;
    for (const coin of deps.catalog.coins()) if (coin.chain_id === this.chainId) this.coinByAsset.set(coin.asset, coin);
    this.log = deps.logger.child({ chain: this.chainId });
    this.mempool = new MempoolTracker(deps.recorder, this.chainId, deps.chain.confirmations);
    const { adapter } = deps;
    if (adapter.watchKey) deps.watched.keyBy(this.chainId, (address) => adapter.watchKey!(address));
  }

  get chain(): ChainConfig {
    return this.deps.chain;
  }

  private get options() {
    return this.deps.chain.watch;
  }

  get pollIntervalMs(): number {
    return this.options.poll_interval_ms;
  }

  /**
   * One pass: catch up with the node's tip, or, while another daemon scans the chain, read its
   * progress. Never throws; trouble is recorded in the status.
   */
  async poll(signal: AbortSignal): Promise<void> {
    if (this.halted) return;
    try {
      if (!(await this.takeRole())) return await this.follow();
      // Read before the tip: see MempoolTracker.
      const waiting = this.deps.adapter.mempool ? await this.deps.adapter.mempool(signal) : null;
      const tip = await this.readTip(signal);
      this.noteTip(tip);
      const cursor = this.cursor ?? (await this.loadCursor(tip, signal));
      if (cursor) {
        await this.fillHeaders(cursor, signal);
        await this.catchUp(cursor, tip, signal);
        await this.checkAgreement(signal);
      }
      if (cursor && waiting) await this.applyMempool(waiting);
      this.checkStall(tip);
      this.recover();
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof CursorMoved) return this.reload(err.message);
      this.fail(err);
    } finally {
      this.lastPollAt = this.deps.clock.now();
      this.applyMaintenance();
    }
  }

  /**
   * Calls `wake` (a poll now) whenever the node pushes a new head, when it pushes any. The push is
   * only a hint: the poll it starts reads the tip and the blocks over JSON-RPC as every poll does,
   * so a head the node then does not serve changes nothing, and a push lost leaves the regular poll.
   */
  onNewHead(wake: () => void): void {
    this.deps.heads?.start(() => wake());
  }

  /**
   * The pause before the next poll: poll_interval_ms, or on a chain with a block time (Tron) just
   * after the next block is due by the tip's timestamp (chains/poll-timing.ts); longer when an
   * endpoint's requests_per_day asks it.
   */
  nextPollDelayMs(): number {
    const pause = alignedPollDelayMs({
      nowMs: this.deps.clock.now().getTime(),
      tipTimeMs: this.nodeTip?.timeMs ?? null,
      blockMs: this.options.block_time_ms ?? 0,
      intervalMs: this.pollIntervalMs,
    });
    return this.deps.adapter.nodes?.pollDelayMs(pause) ?? pause;
  }

  /** The newest block: through the chain's endpoints (the first that is not behind) when the adapter has them. */
  private readTip(signal: AbortSignal): Promise<BlockRef> {
    const { nodes } = this.deps.adapter;
    return nodes ? nodes.tip(signal) : this.deps.adapter.tip(signal);
  }

  /**
   * With a quorum above 1: asks the endpoints for the hashes up to the cursor and promotes what the
   * agreed height now makes deep enough (PRODUCT §15: a block counts toward confirmations only when
   * `quorum` endpoints report its hash).
   */
  private async checkAgreement(signal: AbortSignal): Promise<void> {
    const { nodes } = this.deps.adapter;
    const cursor = this.cursor;
    if (!nodes || this.deps.chain.nodes.quorum <= 1 || !cursor) return;
    if (this.agreed !== null && this.agreed >= cursor.height) return;
    const agreed = await nodes.agreedHeight(cursor.height, (h) => this.storedHash(h), signal);
    if (agreed <= (this.agreed ?? -1)) return;
    this.agreed = agreed;
    await this.deps.store.write((em) => this.deps.recorder.promote(em, this.chainId, agreed, this.deps.chain.confirmations));
  }

  /** The height confirmations count up to, for blocks scanned up to `scanned`: the agreed one under a quorum. */
  private countedHeight(scanned: number): number {
    if (this.deps.chain.nodes.quorum <= 1) return scanned;
    return Math.min(scanned, this.agreed ?? -1);
  }

  /**
   * First contact, at start before the API takes requests: loads the cursor, or creates it at the
   * node's tip, so every address issued from then on is scanned from a block before it. A fresh
   * cursor created only once the node answered again, after addresses were issued, would skip
   * their payments: so an unreachable node leaves the chain's coins in maintenance (no invoice for
   * them) until a poll succeeds. Never throws.
   */
  async prepare(signal: AbortSignal): Promise<void> {
    try {
      if (!(await this.takeRole())) return await this.follow();
      const tip = await this.readTip(signal);
      this.noteTip(tip);
      const cursor = this.cursor ?? (await this.loadCursor(tip, signal));
      if (cursor) await this.fillHeaders(cursor, signal);
      this.recover();
    } catch (err) {
      if (signal.aborted) return;
      this.fail(err);
    } finally {
      this.applyMaintenance();
    }
  }

  status(): ChainStatus {
    const scanned = this.cursor?.height ?? null;
    const tip = this.nodeTip?.height ?? null;
    return {
      chain_id: this.chainId,
      kind: this.deps.chain.kind,
      node_tip: tip,
      scanned_height: scanned,
      // Negative while the node is behind what was already scanned (a node syncing again).
      lag: tip !== null && scanned !== null ? tip - scanned : null,
      maintenance: this.inMaintenance,
      maintenance_reason: this.inMaintenance ? (this.halted ?? this.trouble ?? 'the node has not answered yet') : null,
      scanning: this.scanning,
      last_error: this.lastError?.message ?? null,
      last_error_at: this.lastError ? iso(this.lastError.at) : null,
      last_poll_at: this.lastPollAt ? iso(this.lastPollAt) : null,
    };
  }

  private async catchUp(cursor: Cursor, tip: BlockRef, signal: AbortSignal): Promise<void> {
    if (cursor.height >= tip.height) {
      if (cursor.height === tip.height && cursor.hash === tip.hash) return;
      // A node behind our cursor on the same chain (or further behind than any reorganisation we
      // follow: a node syncing again) is only late, which its stall shows; anything else is a
      // reorganisation, possibly to a shorter chain.
      if (cursor.height > tip.height) {
        if (cursor.height - tip.height > this.options.reorg_max_depth) return;
        if ((await this.storedHash(tip.height)) === tip.hash) return;
      }
      cursor = await this.reorganise(cursor, tip, signal);
    }
    while (cursor.height < tip.height) {
      signal.throwIfAborted();
      const from = cursor.height + 1;
      const to = Math.min(tip.height, from + this.options.batch_size - 1);
      const blocks = await this.deps.adapter.blocks(from, to, signal);
      checkRange(blocks, from, to);
      await this.deps.learnAddresses?.();
      if (cursor.hash !== null && blocks[0]!.parentHash !== cursor.hash) {
        cursor = await this.reorganise(cursor, tip, signal);
        continue;
      }
      // The node may switch branches between the requests of one batch: keep the linked prefix;
      // the next round meets the switch as a parent mismatch.
      cursor = await this.commit(linkedPrefix(blocks), cursor);
    }
  }

  /** Records a batch of blocks that extends the cursor. */
  private commit(blocks: NormalisedBlock[], from: Cursor): Promise<Cursor> {
    const top = blocks[blocks.length - 1]!;
    const to: Cursor = { height: top.height, hash: top.hash };
    return this.scanWrite(from, to, (em) => this.apply(em, blocks, to));
  }

  /**
   * One write transaction of the scan: it moves the cursor from `from` (where this daemon left it)
   * to `to` first, then does `work`; the cursor in memory follows once it committed.
   */
  private async scanWrite(from: Cursor, to: Cursor, work: (em: EntityManager) => Promise<void>): Promise<Cursor> {
    await this.deps.store.write(async (em) => {
      if (!(await moveCursor(em, this.chainId, from, to, iso(this.deps.clock.now()))))
        throw new CursorMoved(`another daemon scanned past height ${from.height}`);
      await work(em);
    });
    this.cursor = to;
    return to;
  }

  /**
   * Inside a scan's transaction that moves the cursor to `cursor`: observes the transfers of
   * `blocks` (which end at `cursor`, or none), stores their headers and promotes what is now deep
   * enough. Confirmations count up to the last block linked to our chain, never to a node tip not
   * yet checked.
   */
  private async apply(em: EntityManager, blocks: NormalisedBlock[], cursor: Cursor): Promise<void> {
    const { chainId } = this;
    const counted = this.countedHeight(cursor.height);
    // A loop rather than flatMaps: thousands of outputs a block, nearly all of them screened out.
    const observations: IncomingObservation[] = [];
    for (const block of blocks)
      for (const t of this.deps.watched.mayWatch(this.chainId, block.transfers)) {
        const observed = this.observation(t, block, Math.max(0, counted - block.height + 1));
        if (observed) observations.push(observed);
      }
    await this.deps.recorder.observeAll(em, observations, this.deps.chain.confirmations);
    // After the payments: an output received in this batch may be spent in it too.
    await this.deps.recorder.observeAll(em, spendObservations(this.deps.coins, this.chainId, this.coinByAsset, blocks, counted), this.deps.chain.confirmations);
    await insertHeaders(
      em,
      blocks.map((b) => ({ chain_id: chainId, height: b.height, hash: b.hash, parent_hash: b.parentHash })),
    );
    await pruneHeaders(em, chainId, cursor.height - this.options.reorg_max_depth);
    await this.deps.recorder.promote(em, chainId, counted, this.deps.chain.confirmations);
  }

  /**
   * The node's chain no longer contains our cursor block: find the highest stored header the node
   * still has (at most reorg_max_depth below the cursor), revert every transfer above it that the
   * new branch does not hold, record the new branch up to the old height, and go on from there.
   * Only a stored header the node holds is a fork point: one missing (never stored, or pruned) is
   * never taken on the node's word. fillHeaders keeps them stored down to reorg_max_depth.
   */
  private async reorganise(cursor: Cursor, tip: BlockRef, signal: AbortSignal): Promise<Cursor> {
    const depth = this.options.reorg_max_depth;
    const floor = Math.max(cursor.height - depth, -1);
    const stored = new Map(
      (await this.deps.store.read.find(ChainBlockEntity, { where: { chain_id: this.chainId, height: MoreThanOrEqual(floor) } })).map((b) => [b.height, b]),
    );
    let fork: Cursor | null = null;
    for (let h = Math.min(cursor.height, tip.height); h >= floor; h--) {
      if (h < 0) {
        // Before the genesis block: the whole chain is replaced.
        fork = { height: -1, hash: null };
        break;
      }
      const ours = stored.get(h);
      if (!ours) {
        this.halt(
          `reorganisation below scanned height ${cursor.height} reaches height ${h}, whose scanned header is not stored: no fork point can be verified, scanning stopped`,
        );
        throw new Error(this.halted!);
      }
      const theirs = await this.deps.adapter.header(h, signal);
      if (theirs.hash === ours.hash) {
        fork = { height: h, hash: ours.hash };
        break;
      }
    }
    if (!fork) {
      this.halt(`reorganisation deeper than reorg_max_depth (${depth}) below scanned height ${cursor.height}: scanning stopped`);
      throw new Error(this.halted!);
    }
    if (fork.height === cursor.height) throw new Error(`the node returned a block at ${cursor.height + 1} whose parent it does not hold`);

    const top = Math.min(cursor.height, tip.height);
    const branch = fork.height < top ? await this.deps.adapter.blocks(fork.height + 1, top, signal) : [];
    checkRange(branch, fork.height + 1, top);
    if (branch.length > 0 && ((fork.hash !== null && branch[0]!.parentHash !== fork.hash) || linkedPrefix(branch).length < branch.length))
      throw new Error('the node switched branches again during a reorganisation; retrying');
    await this.deps.learnAddresses?.();

    let reverted = 0;
    const last = branch[branch.length - 1];
    const target: Cursor = last ? { height: last.height, hash: last.hash } : fork;
    const next = await this.scanWrite(cursor, target, async (em) => {
      const kept = transferKeys(branch, this.coinByAsset);
      const dropped = await em.find(ChainTransferEntity, {
        where: { chain_id: this.chainId, block_height: MoreThan(fork!.height), status: Not('reverted') },
      });
      for (const row of dropped) {
        if (kept.has(transferKey(row.txid, row.coin_id, row.output_index, row.direction))) continue;
        await this.deps.recorder.revert(em, row);
        reverted++;
      }
      await em.delete(ChainBlockEntity, { chain_id: this.chainId, height: MoreThan(fork!.height) });
      await this.apply(em, branch, target);
    });
    this.log.warn('chain reorganisation', {
      fork_height: fork.height,
      dropped_blocks: cursor.height - fork.height,
      new_blocks: branch.length,
      reverted_transfers: reverted,
    });
    // A shorter branch moved the cursor down: the walk-back of a later reorganisation reaches
    // below the headers kept so far; what the endpoints agreed on above the fork is asked again.
    this.headersFull = false;
    if (this.agreed !== null) this.agreed = Math.min(this.agreed, fork.height);
    await this.fillHeaders(next, signal);
    return next;
  }

  /**
   * A transfer to a watched address of a known coin, as the recorder takes it; null for any other.
   * Only for transfers that passed WatchedAddresses.mayWatch: this builds their address text.
   */
  private observation(t: NormalisedTransfer, block: BlockRef | null, confirmations: number): IncomingObservation | null {
    const addressId = this.deps.watched.lookup(this.chainId, t.to);
    if (addressId === undefined) return null;
    const coin = this.coinByAsset.get(t.asset);
    if (!coin || t.amount <= 0n) return null;
    return {
      chainId: this.chainId,
      coinId: coin.id,
      txid: t.txid,
      index: t.index,
      address: t.to,
      addressId,
      amount: Amount.fromBaseUnits(t.amount, coin.decimals).toString(),
      blockHeight: block?.height ?? null,
      blockHash: block?.hash ?? null,
      confirmations,
    };
  }

  private async applyMempool(waiting: NormalisedTransfer[]): Promise<void> {
    await this.deps.learnAddresses?.();
    const observations = this.deps.watched.mayWatch(this.chainId, waiting).flatMap((t) => this.observation(t, null, 0) ?? []);
    const { dropped } = await this.deps.store.write((em) => this.mempool.apply(em, observations));
    if (dropped > 0) this.log.info('transfers left the mempool unconfirmed', { reverted_transfers: dropped });
  }

  private async loadCursor(tip: BlockRef, signal: AbortSignal): Promise<Cursor | null> {
    const row = await this.deps.store.read.findOneBy(ChainCursorEntity, { chain_id: this.chainId });
    if (row) return (this.cursor = { height: row.height, hash: row.hash });
    const start = this.options.start_height ?? tip.height;
    if (start > tip.height + 1) {
      this.log.info('waiting for the node to reach the start height', { start_height: start, node_tip: tip.height });
      return null;
    }
    const base = start === 0 ? null : await this.deps.adapter.header(start - 1, signal);
    const cursor: Cursor = base ? { height: base.height, hash: base.hash } : { height: -1, hash: null };
    await this.deps.store.write(async (em) => {
      await createCursor(em, this.chainId, cursor.height, cursor.hash, iso(this.deps.clock.now()));
      if (base) await insertHeaders(em, [{ chain_id: this.chainId, height: base.height, hash: base.hash, parent_hash: base.parentHash }]);
    });
    this.log.info('chain cursor created', { start_height: start });
    return (this.cursor = cursor);
  }

  /**
   * Makes the stored headers reach reorg_max_depth below `cursor` (or the genesis block), so the
   * walk-back of a reorganisation can verify every fork point it may take. They fall short after
   * the cursor is created (only its base block is stored) and after a reorganisation to a shorter
   * branch (the headers below were pruned while the cursor was higher); the headers below the
   * lowest stored one are the node's, each checked to be the parent of the one above it.
   */
  private async fillHeaders(cursor: Cursor, signal: AbortSignal): Promise<void> {
    if (this.headersFull) return;
    const bottom = Math.max(cursor.height - this.options.reorg_max_depth, 0);
    const lowest = await this.deps.store.read.findOne(ChainBlockEntity, { where: { chain_id: this.chainId }, order: { height: 'ASC' } });
    if (lowest && lowest.height > bottom) {
      const below = await this.headersBelow(lowest, bottom, signal);
      if (below.length > 0) await this.deps.store.write((em) => insertHeaders(em, below));
    }
    this.headersFull = true;
  }

  /**
   * The node's headers from just below `lowest` down to `bottom`, as long as each is the parent of
   * the one above: the blocks under what was scanned. Stops at the first that is not (the node's
   * chain no longer holds `lowest`, a reorganisation the walk-back meets).
   */
  private async headersBelow(lowest: ChainBlockRow, bottom: number, signal: AbortSignal): Promise<ChainBlockRow[]> {
    const headers: ChainBlockRow[] = [];
    let parent = lowest.parent_hash;
    for (let h = lowest.height - 1; h >= bottom; h--) {
      const header = await this.deps.adapter.header(h, signal);
      if (header.hash !== parent) {
        this.log.warn("the node's chain changed under the lowest scanned header", { height: h + 1 });
        break;
      }
      headers.push({ chain_id: this.chainId, height: h, hash: header.hash, parent_hash: header.parentHash });
      parent = header.parentHash;
    }
    return headers;
  }

  /**
   * Whether this daemon scans the chain now (its scanner role). A daemon that takes the role, or
   * loses it, forgets what it knew of the chain: a scanner starts from the cursor and the headers
   * the database holds, which another daemon may have moved.
   */
  private async takeRole(): Promise<boolean> {
    const held = await this.deps.store.roles.hold(`scanner:${this.chainId}`);
    if (held !== this.scanning) {
      this.scanning = held;
      this.cursor = undefined;
      this.nodeTip = undefined;
      this.headersFull = false;
      this.agreed = null;
      this.log.info(held ? 'this daemon scans the chain' : 'another daemon scans the chain');
    }
    return held;
  }

  /**
   * Another daemon scans the chain: its progress in the database is this daemon's status. The coins
   * are offered once the chain has a cursor (see prepare: every address issued from then on is
   * scanned from a block before it, whichever daemon issued it).
   */
  private async follow(): Promise<void> {
    const row = await this.deps.store.read.findOneBy(ChainCursorEntity, { chain_id: this.chainId });
    if (!row) throw new Error('waiting for the daemon that scans this chain to reach its node');
    this.cursor = { height: row.height, hash: row.hash };
    this.recover();
  }

  /** Another daemon scanned the chain meanwhile: the next poll reads again what it recorded. */
  private reload(reason: string): void {
    this.log.warn('chain cursor moved by another daemon; reloading it', { reason });
    this.cursor = undefined;
    this.headersFull = false;
  }

  private async storedHash(height: number): Promise<string | undefined> {
    return (await this.deps.store.read.findOneBy(ChainBlockEntity, { chain_id: this.chainId, height }))?.hash;
  }

  private noteTip(tip: BlockRef): void {
    if (this.nodeTip?.height !== tip.height || this.nodeTip.hash !== tip.hash) this.tipChangedAt = this.deps.clock.now().getTime();
    this.nodeTip = tip;
    this.deps.heads?.polledTip?.(tip.height);
  }

  private checkStall(tip: BlockRef): void {
    const stall = this.options.stall_seconds;
    if (stall > 0 && this.deps.clock.now().getTime() - this.tipChangedAt! > stall * 1000)
      throw new NodeStale(`the node's tip has not moved for more than ${stall} s (height ${tip.height})`);
  }

  /**
   * A failed poll. A node on another network (NodeFault), behind (NodeStale) or gone from the
   * chain's cursor puts the coins in maintenance at once; any other trouble (unreachable, rate
   * limited, an error) only after maintenance_after_seconds without a good poll (PRODUCT §15).
   */
  private fail(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.lastError = { message, at: this.deps.clock.now() };
    if (message !== this.trouble) this.log.warn('chain node trouble', { error: message });
    this.trouble = message;
    this.troubleAtOnce = err instanceof NodeFault || err instanceof NodeStale;
  }

  private recover(): void {
    if (this.trouble !== null) this.log.info('chain node back', { scanned_height: this.cursor?.height ?? null });
    this.trouble = null;
    this.lastGoodAt = this.deps.clock.now().getTime();
  }

  private halt(reason: string): void {
    this.halted = reason;
    this.log.error('chain scanning stopped', { reason, hint: 'see docs/chains.md: a reorganisation deeper than reorg_max_depth' });
  }

  private applyMaintenance(): void {
    const on = this.halted !== null || (this.trouble !== null && (this.troubleAtOnce || this.troubleOutlasted()));
    if (on === this.inMaintenance) return;
    this.inMaintenance = on;
    for (const coin of this.coinByAsset.values()) this.deps.catalog.setMaintenance(coin.id, on);
    if (on) this.log.warn('chain coins in maintenance', { reason: this.halted ?? this.trouble });
    else this.log.info('chain coins out of maintenance');
  }

  /**
   * No good poll for maintenance_after_seconds, or none yet: before the first the chain may have no
   * cursor, and an address issued then might be paid in a block the cursor would start after.
   */
  private troubleOutlasted(): boolean {
    if (this.lastGoodAt === null) return true;
    return this.deps.clock.now().getTime() - this.lastGoodAt >= this.deps.chain.nodes.maintenance_after_seconds * 1000;
  }
}

function checkRange(blocks: NormalisedBlock[], from: number, to: number): void {
  if (blocks.length !== to - from + 1 || blocks.some((b, i) => b.height !== from + i)) throw new Error(`the node returned blocks other than ${from}..${to}`);
}

/** The leading blocks each of which is the parent of the next. */
function linkedPrefix(blocks: NormalisedBlock[]): NormalisedBlock[] {
  let n = 1;
  while (n < blocks.length && blocks[n]!.parentHash === blocks[n - 1]!.hash) n++;
  return blocks.slice(0, n);
}
