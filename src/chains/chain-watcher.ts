import { MoreThan, MoreThanOrEqual, Not, type EntityManager } from 'typeorm';
import type { Catalog, Coin } from '../catalog/coins';
import type { ChainConfig } from '../config/schema';
import { ChainTransferEntity } from '../db/entities/chain';
import { ChainBlockEntity, ChainCursorEntity } from '../db/entities/chain-scan';
import type { Store } from '../db/store';
import { iso, type Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { Amount } from '../shared/money';
import { MempoolTracker } from './mempool-tracker';
import { insertHeaders, pruneHeaders, saveCursor } from './scan-rows';
import { transferKey, type TransferRecorder } from './transfer-recorder';
import { spendObservations, transferKeys } from './block-transfers';
import type { BlockRef, ChainReader, IncomingObservation, NormalisedBlock, NormalisedTransfer } from './types';
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
  last_error: string | null;
  last_error_at: string | null;
  last_poll_at: string | null;
}

/** The last scanned block; `hash` null only before the genesis block. */
interface Cursor {
  height: number;
  hash: string | null;
}

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
}

/**
 * The one chain core, for one chain (ARCHITECTURE "One chain core"). Each poll reads the node's tip,
 * fetches the blocks after the cursor in batches, records the transfers to watched addresses through
 * the TransferRecorder and promotes the ones deep enough; the cursor, the block headers, the
 * transfers and (through the router) the credits of a batch commit in one transaction, so a crash at
 * any point resumes after the last committed batch and a rescan is harmless. A parent hash that
 * does not match walks back to the fork point and replays the new branch. Node trouble puts the
 * chain's coins in maintenance until a poll succeeds again.
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
  /** Set by a reorganisation deeper than reorg_max_depth: scanning stops until restart. */
  private halted: string | null = null;
  private inMaintenance = false;
  private lastError: { message: string; at: Date } | null = null;
  private lastPollAt: Date | null = null;
  private readonly mempool: MempoolTracker;

  constructor(private readonly deps: ChainWatcherDeps) {
    this.chainId = deps.chain.id;
    for (const coin of deps.catalog.coins()) if (coin.chain_id === this.chainId) this.coinByAsset.set(coin.asset, coin);
    this.log = deps.logger.child({ chain: this.chainId });
    this.mempool = new MempoolTracker(deps.recorder, this.chainId, deps.chain.confirmations);
    const { adapter } = deps;
    if (adapter.watchKey) deps.watched.keyBy(this.chainId, (address) => adapter.watchKey!(address));
  }

  private get options() {
    return this.deps.chain.watch;
  }

  get pollIntervalMs(): number {
    return this.options.poll_interval_ms;
  }

  /** One pass: catch up with the node's tip. Never throws; trouble is recorded in the status. */
  async poll(signal: AbortSignal): Promise<void> {
    if (this.halted) return;
    try {
      // Read before the tip: see MempoolTracker.
      const waiting = this.deps.adapter.mempool ? await this.deps.adapter.mempool(signal) : null;
      const tip = await this.deps.adapter.tip(signal);
      this.noteTip(tip);
      const cursor = this.cursor ?? (await this.loadCursor(tip, signal));
      if (cursor) await this.catchUp(cursor, tip, signal);
      if (cursor && waiting) await this.applyMempool(waiting);
      this.checkStall(tip);
      this.recover();
    } catch (err) {
      if (signal.aborted) return;
      this.fail(err instanceof Error ? err.message : String(err));
    } finally {
      this.lastPollAt = this.deps.clock.now();
      this.applyMaintenance();
    }
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
      const tip = await this.deps.adapter.tip(signal);
      this.noteTip(tip);
      if (!this.cursor) await this.loadCursor(tip, signal);
    } catch (err) {
      if (signal.aborted) return;
      this.fail(err instanceof Error ? err.message : String(err));
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
  private async commit(blocks: NormalisedBlock[], from: Cursor): Promise<Cursor> {
    const cursor = await this.deps.store.write((em) => this.apply(em, blocks, from));
    this.cursor = cursor;
    return cursor;
  }

  /**
   * Inside the caller's transaction: observes the transfers of `blocks` (which extend `base`),
   * stores their headers, moves the cursor and promotes what is now deep enough. Confirmations count
   * up to the last block linked to our chain, never to a node tip not yet checked.
   */
  private async apply(em: EntityManager, blocks: NormalisedBlock[], base: Cursor): Promise<Cursor> {
    const { chainId } = this;
    const top = blocks.length > 0 ? blocks[blocks.length - 1]! : null;
    const cursor: Cursor = top ? { height: top.height, hash: top.hash } : base;
    // A loop rather than flatMaps: thousands of outputs a block, nearly all of them screened out.
    const observations: IncomingObservation[] = [];
    for (const block of blocks)
      for (const t of this.deps.watched.mayWatch(this.chainId, block.transfers)) {
        const observed = this.observation(t, block, cursor.height - block.height + 1);
        if (observed) observations.push(observed);
      }
    await this.deps.recorder.observeAll(em, observations, this.deps.chain.confirmations);
    // After the payments: an output received in this batch may be spent in it too.
    await this.deps.recorder.observeAll(em, spendObservations(this.deps.coins, this.chainId, this.coinByAsset, blocks, cursor.height), this.deps.chain.confirmations);
    await insertHeaders(em, blocks.map((b) => ({ chain_id: chainId, height: b.height, hash: b.hash, parent_hash: b.parentHash })));
    await saveCursor(em, chainId, cursor.height, cursor.hash, iso(this.deps.clock.now()));
    await pruneHeaders(em, chainId, cursor.height - this.options.reorg_max_depth);
    await this.deps.recorder.promote(em, chainId, cursor.height, this.deps.chain.confirmations);
    return cursor;
  }

  /**
   * The node's chain no longer contains our cursor block: find the highest stored header the node
   * still has (at most reorg_max_depth below the cursor), revert every transfer above it that the
   * new branch does not hold, record the new branch up to the old height, and go on from there.
   */
  private async reorganise(cursor: Cursor, tip: BlockRef, signal: AbortSignal): Promise<Cursor> {
    const depth = this.options.reorg_max_depth;
    const floor = Math.max(cursor.height - depth, -1);
    const stored = new Map(
      (await this.deps.store.read.find(ChainBlockEntity, { where: { chain_id: this.chainId, height: MoreThanOrEqual(floor) } })).map((b) => [b.height, b]),
    );
    let fork: Cursor | null = null;
    for (let h = Math.min(cursor.height, tip.height); h >= floor; h--) {
      const ours = stored.get(h);
      if (!ours) {
        // Below the first block this install scanned: all of what it scanned is replaced.
        fork = h < 0 ? { height: -1, hash: null } : { height: h, hash: (await this.deps.adapter.header(h, signal)).hash };
        break;
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

    let reverted = 0;
    const next = await this.deps.store.write(async (em) => {
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
      return this.apply(em, branch, fork!);
    });
    this.cursor = next;
    this.log.warn('chain reorganisation', {
      fork_height: fork.height,
      dropped_blocks: cursor.height - fork.height,
      new_blocks: branch.length,
      reverted_transfers: reverted,
    });
    return next;
  }

  /**
   * A transfer to a watched address of a known coin, as the recorder takes it; null for any other.
   * Only for transfers that passed WatchedAddresses.mayWatch: this builds their address text.
   */
  private observation(t: NormalisedTransfer, block: BlockRef | null, confirmations: number): IncomingObservation | null {
    if (this.deps.watched.lookup(this.chainId, t.to) === undefined) return null;
    const coin = this.coinByAsset.get(t.asset);
    if (!coin || t.amount <= 0n) return null;
    return {
      chainId: this.chainId,
      coinId: coin.id,
      txid: t.txid,
      index: t.index,
      address: t.to,
      amount: Amount.fromBaseUnits(t.amount, coin.decimals).toString(),
      blockHeight: block?.height ?? null,
      blockHash: block?.hash ?? null,
      confirmations,
    };
  }

  private async applyMempool(waiting: NormalisedTransfer[]): Promise<void> {
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
      await saveCursor(em, this.chainId, cursor.height, cursor.hash, iso(this.deps.clock.now()));
      if (base) await insertHeaders(em, [{ chain_id: this.chainId, height: base.height, hash: base.hash, parent_hash: base.parentHash }]);
    });
    this.log.info('chain cursor created', { start_height: start });
    return (this.cursor = cursor);
  }

  private async storedHash(height: number): Promise<string | undefined> {
    return (await this.deps.store.read.findOneBy(ChainBlockEntity, { chain_id: this.chainId, height }))?.hash;
  }

  private noteTip(tip: BlockRef): void {
    if (this.nodeTip?.height !== tip.height || this.nodeTip.hash !== tip.hash) this.tipChangedAt = this.deps.clock.now().getTime();
    this.nodeTip = tip;
  }

  private checkStall(tip: BlockRef): void {
    const stall = this.options.stall_seconds;
    if (stall > 0 && this.deps.clock.now().getTime() - this.tipChangedAt! > stall * 1000)
      throw new Error(`the node's tip has not moved for more than ${stall} s (height ${tip.height})`);
  }

  private fail(message: string): void {
    this.lastError = { message, at: this.deps.clock.now() };
    if (message !== this.trouble) this.log.warn('chain node trouble', { error: message });
    this.trouble = message;
  }

  private recover(): void {
    if (this.trouble !== null) this.log.info('chain node back', { scanned_height: this.cursor?.height ?? null });
    this.trouble = null;
  }

  private halt(reason: string): void {
    this.halted = reason;
    this.log.error('chain scanning stopped', { reason, hint: 'see README "Chains": a reorganisation deeper than reorg_max_depth' });
  }

  private applyMaintenance(): void {
    const on = this.halted !== null || this.trouble !== null;
    if (on === this.inMaintenance) return;
    this.inMaintenance = on;
    for (const coin of this.coinByAsset.values()) this.deps.catalog.setMaintenance(coin.id, on);
    if (on) this.log.warn('chain coins in maintenance', { reason: this.halted ?? this.trouble });
    else this.log.info('chain coins out of maintenance');
  }
}

function checkRange(blocks: NormalisedBlock[], from: number, to: number): void {
  if (blocks.length !== to - from + 1 || blocks.some((b, i) => b.height !== from + i))
    throw new Error(`the node returned blocks other than ${from}..${to}`);
}

/** The leading blocks each of which is the parent of the next. */
function linkedPrefix(blocks: NormalisedBlock[]): NormalisedBlock[] {
  let n = 1;
  while (n < blocks.length && blocks[n]!.parentHash === blocks[n - 1]!.hash) n++;
  return blocks.slice(0, n);
}
