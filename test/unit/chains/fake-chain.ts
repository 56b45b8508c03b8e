import type { EntityManager } from 'typeorm';
import type { BlockHeader, BlockRef, ChainReader, NormalisedBlock, NormalisedSpend, NormalisedTransfer, TransferHandler } from '../../../src/chains/types';
import type { ChainTransferRow, TransferDirection, TransferStatus } from '../../../src/db/entities/chain';
import { EventEntity } from '../../../src/db/entities/events';
import type { Store } from '../../../src/db/store';
import { Outbox } from '../../../src/events/outbox';
import type { Clock } from '../../../src/shared/clock';
import type { EventType } from '../../../src/shared/events';

/**
 * A node in memory: blocks by height on one best chain, which tests extend, cut back (a
 * reorganisation), or take down. Block hashes carry the branch tag, so two branches never share one.
 */
export class FakeChain implements ChainReader {
  readonly chainId = 'ethereum';
  down: string | null = null;
  requests = 0;
  private readonly chain: NormalisedBlock[] = [];

  constructor() {
    this.mine();
  }

  get height(): number {
    return this.chain.length - 1;
  }

  /** Appends one block holding `transfers` (and `spends`), on the branch `tag`. */
  mine(transfers: NormalisedTransfer[] = [], tag = 'a', spends: NormalisedSpend[] = []): NormalisedBlock {
    const height = this.chain.length;
    const block: NormalisedBlock = {
      height,
      hash: `0x${tag}${height}`,
      parentHash: height === 0 ? '0x00' : this.chain[height - 1]!.hash,
      transfers,
      spends,
    };
    this.chain.push(block);
    return block;
  }

  mineEmpty(n: number, tag = 'a'): void {
    for (let i = 0; i < n; i++) this.mine([], tag);
  }

  /** Drops every block from `height` up: the next `mine` calls build the new branch. */
  cutBackTo(height: number): void {
    this.chain.length = height;
  }

  async tip(): Promise<BlockRef> {
    this.request();
    const b = this.chain[this.height]!;
    return { height: b.height, hash: b.hash };
  }

  async header(height: number): Promise<BlockHeader> {
    this.request();
    const b = this.chain[height];
    if (!b) throw new Error(`no block at ${height}`);
    return { height: b.height, hash: b.hash, parentHash: b.parentHash };
  }

  async blocks(from: number, to: number): Promise<NormalisedBlock[]> {
    this.request();
    return this.chain.slice(from, to + 1).map((b) => ({ ...b, transfers: b.transfers.map((t) => ({ ...t })), spends: b.spends?.map((s) => ({ ...s })) }));
  }

  private request(): void {
    this.requests++;
    if (this.down) throw new Error(this.down);
  }
}

export interface SinkCall {
  direction: TransferDirection;
  txid: string;
  index: number;
  amount: string;
  status: TransferStatus;
  previous: TransferStatus | null;
  height: number | null;
}

const EVENT_OF: Record<TransferStatus, EventType> = { seen: 'deposit.pending', confirmed: 'deposit.confirmed', reverted: 'deposit.reverted' };

/**
 * A sink that writes each status change it is told of into the outbox, inside the core's
 * transaction, as a payments sink writes its credits: what it reports is what committed.
 * `failWhen` makes it throw, a crash in the middle of a transaction.
 */
export class RecordingSink implements TransferHandler {
  failWhen: ((row: ChainTransferRow) => boolean) | null = null;
  private readonly outbox = new Outbox();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async onTransfer(em: EntityManager, row: ChainTransferRow, previous: TransferStatus | null): Promise<void> {
    if (this.failWhen?.(row)) throw new Error('crash inside the transaction');
    const call: SinkCall = {
      direction: row.direction,
      txid: row.txid,
      index: row.output_index,
      amount: row.amount,
      status: row.status,
      previous,
      height: row.block_height,
    };
    await this.outbox.emit(em, { accountId: row.account_id, type: EVENT_OF[row.status], data: { ...call }, objectId: row.id, at: this.clock.now() });
  }

  async calls(): Promise<SinkCall[]> {
    const rows = await this.store.read.find(EventEntity, { order: { seq: 'ASC' } });
    return rows.map((r) => (JSON.parse(r.body) as { data: SinkCall }).data);
  }

  /** The changes of one transfer, as `previous>status`. */
  async of(txid: string): Promise<string[]> {
    return (await this.calls()).filter((c) => c.txid === txid).map((c) => `${c.previous ?? 'new'}>${c.status}`);
  }
}
