import type { EntityManager } from 'typeorm';
import { AddressEntity, ChainTransferEntity, type ChainTransferRow, type TransferStatus } from '../db/entities/chain';
import { iso, type Clock } from '../shared/clock';
import { newId } from '../shared/ids';
import type { TransferObservation, TransferSink } from './types';

/** A transfer's identity on its chain: one output (or log) of one transaction, per coin. */
export const transferKey = (txid: string, coinId: string, index: number): string => `${txid}\u0000${coinId}\u0000${index}`;

/**
 * Keeps `chain_transfers` true to what the chains show and tells the sink of every status change,
 * inside the caller's transaction. The one place that decides seen / confirmed / reverted: the
 * chain core calls it for real nodes, tests call it with an in-memory source. Observing the same
 * transfer again is harmless (idempotent), which is what makes a rescan after a crash safe.
 */
export class TransferRecorder {
  constructor(private readonly sink: TransferSink, private readonly clock: Clock) {}

  /**
   * A transfer to a watched address, in a block (`confirmations` = tip − height + 1) or in the
   * mempool (block null, 0 confirmations). It is confirmed once in a block with at least
   * `required` confirmations. Returns the row, or null when the address is not ours.
   */
  async observe(em: EntityManager, obs: TransferObservation, required: number): Promise<ChainTransferRow | null> {
    const now = iso(this.clock.now());
    const status: TransferStatus = obs.blockHeight !== null && obs.confirmations >= required ? 'confirmed' : 'seen';
    const existing = await em.findOneBy(ChainTransferEntity, {
      chain_id: obs.chainId,
      txid: obs.txid,
      coin_id: obs.coinId,
      output_index: obs.index,
    });
    if (!existing) {
      const address = await em.findOneBy(AddressEntity, { chain_id: obs.chainId, address: obs.address });
      if (!address) return null;
      const row: ChainTransferRow = {
        id: newId(),
        chain_id: obs.chainId,
        coin_id: obs.coinId,
        txid: obs.txid,
        output_index: obs.index,
        address: obs.address,
        address_id: address.id,
        account_id: address.account_id,
        amount: obs.amount,
        block_height: obs.blockHeight,
        block_hash: obs.blockHash,
        confirmations: obs.confirmations,
        status,
        seen_at: now,
        confirmed_at: status === 'confirmed' ? now : null,
        reverted_at: null,
        created_at: now,
        updated_at: now,
      };
      await em.insert(ChainTransferEntity, row);
      await this.sink.onTransfer(em, row, null);
      return row;
    }
    // A confirmed transfer seen again in the mempool or a younger block changes nothing.
    if (existing.status === 'confirmed' && status === 'seen' && obs.blockHeight === null) return existing;
    const next: ChainTransferRow = {
      ...existing,
      block_height: obs.blockHeight,
      block_hash: obs.blockHash,
      confirmations: obs.confirmations,
      status: existing.status === 'confirmed' ? 'confirmed' : status,
      updated_at: now,
    };
    if (next.status === 'confirmed' && existing.status !== 'confirmed') next.confirmed_at = now;
    if (existing.status === 'reverted') next.reverted_at = null;
    await em.update(ChainTransferEntity, { id: existing.id }, next);
    if (next.status !== existing.status) await this.sink.onTransfer(em, next, existing.status);
    return next;
  }

  /** Seen transfers whose block is now deep enough become confirmed. */
  async promote(em: EntityManager, chainId: string, tipHeight: number, required: number): Promise<number> {
    const deepest = tipHeight - Math.max(required, 1) + 1;
    const rows = await em
      .createQueryBuilder(ChainTransferEntity, 't')
      .where('t.chain_id = :chainId AND t.status = :seen AND t.block_height IS NOT NULL AND t.block_height <= :deepest', {
        chainId,
        seen: 'seen',
        deepest,
      })
      .getMany();
    const now = iso(this.clock.now());
    for (const row of rows) {
      const next: ChainTransferRow = {
        ...row,
        status: 'confirmed',
        confirmations: tipHeight - row.block_height! + 1,
        confirmed_at: now,
        updated_at: now,
      };
      const res = await em.update(ChainTransferEntity, { id: row.id, status: 'seen' }, next);
      if (res.affected === 1) await this.sink.onTransfer(em, next, 'seen');
    }
    return rows.length;
  }

  /** A transfer the chain no longer holds: its block was reorganised away, or it left the mempool. */
  async revert(em: EntityManager, row: ChainTransferRow): Promise<void> {
    if (row.status === 'reverted') return;
    const now = iso(this.clock.now());
    const next: ChainTransferRow = { ...row, status: 'reverted', confirmations: 0, reverted_at: now, updated_at: now };
    const res = await em.update(ChainTransferEntity, { id: row.id, status: row.status }, next);
    if (res.affected === 1) await this.sink.onTransfer(em, next, row.status);
  }
}
