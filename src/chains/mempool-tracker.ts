import { IsNull, type EntityManager } from 'typeorm';
import { ChainTransferEntity } from '../db/entities/chain';
import { transferKey, type TransferRecorder } from './transfer-recorder';
import type { IncomingObservation } from './types';

/**
 * Keeps the transfers a node holds in its mempool (Bitcoin) in step with it, inside the caller's
 * transaction: a transfer that enters the mempool is seen (its invoice `pending`); one that leaves
 * the mempool without being in a scanned block (replaced, double-spent, evicted) is reverted, which
 * takes its invoice back from `pending`. Transfers already in a block on our chain belong to the
 * block scan and are left alone.
 *
 * The caller reads the mempool before the node's tip and applies it after scanning up to that tip:
 * a transaction mined in between is then in a scanned block, never wrongly taken for one that left.
 */
export class MempoolTracker {
  constructor(
    private readonly recorder: TransferRecorder,
    private readonly chainId: string,
    private readonly required: number,
  ) {}

  /** `waiting`: the mempool's transfers to watched addresses, as observations without a block. */
  async apply(em: EntityManager, waiting: IncomingObservation[]): Promise<{ seen: number; dropped: number }> {
    const held = await em.find(ChainTransferEntity, { where: { chain_id: this.chainId, direction: 'incoming', block_height: IsNull(), status: 'seen' } });
    const heldKeys = new Set(held.map((r) => transferKey(r.txid, r.coin_id, r.output_index, 'incoming')));
    const waitingKeys = new Set<string>();
    let seen = 0;
    for (const obs of waiting) {
      const key = transferKey(obs.txid, obs.coinId, obs.index, 'incoming');
      waitingKeys.add(key);
      if (heldKeys.has(key)) continue;
      const existing = await em.findOneBy(ChainTransferEntity, {
        chain_id: this.chainId,
        txid: obs.txid,
        coin_id: obs.coinId,
        output_index: obs.index,
        direction: 'incoming',
      });
      if (existing && existing.status !== 'reverted' && existing.block_height !== null) continue;
      if (await this.recorder.observe(em, obs, this.required)) seen++;
    }
    let dropped = 0;
    for (const row of held) {
      if (waitingKeys.has(transferKey(row.txid, row.coin_id, row.output_index, 'incoming'))) continue;
      await this.recorder.revert(em, row);
      dropped++;
    }
    return { seen, dropped };
  }
}
