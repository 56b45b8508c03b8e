import type { EntityManager } from 'typeorm';
import type { ChainTransferRow, TransferStatus } from '../db/entities/chain';
import { WithdrawalEntity } from '../db/entities/withdrawals';
import { updateRows } from '../db/raw';
import type { TransferHandler } from '../chains/types';
import { iso, type Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { WithdrawalService } from '../withdrawals/withdrawal.service';
import type { PayoutStore } from './payout-store';

/**
 * The payouts' handler of the wallet's own spends (outgoing chain transfers, whatever the purpose
 * of the address they spend from), in the chain core's transaction: a candidate of a stored payout
 * confirmed at the chain's confirmations marks the payout confirmed (the worker then completes its
 * withdrawals and settles their holds), a failed payout too, which is then reopened; a confirmed candidate whose block is reorganised away takes
 * the payout and its completed withdrawals back to `broadcast`: their money stays settled, and the
 * same payout waits to be mined again (its wait before a replacement starts anew), never paid a
 * second time.
 */
export class PayoutTransfers implements TransferHandler {
  constructor(private readonly deps: { payouts: PayoutStore; withdrawals: WithdrawalService; clock: Clock; logger: Logger }) {}

  async onTransfer(em: EntityManager, transfer: ChainTransferRow, previous: TransferStatus | null): Promise<void> {
    if (transfer.direction !== 'outgoing') return;
    const payout = await this.deps.payouts.byTxid(em, transfer.chain_id, transfer.txid);
    if (!payout) return;
    const now = iso(this.deps.clock.now());
    if (transfer.status === 'confirmed' && previous !== 'confirmed') {
      if (payout.status === 'confirmed') return;
      if (payout.status === 'failed') {
        // A payout that confirmed without paying (reverted, or cancelled) failed on its own confirmation, not on a proof.
        if (payout.confirmed_txid !== null || payout.candidate_kind === 'cancel') return;
        // Failed on what looked like proof and mined after all: reopened, never only logged (PRODUCT §14); the worker completes it.
        if (
          (await updateRows(
            em,
            'chain_payouts',
            { status: 'confirmed', confirmed_txid: transfer.txid, held: 1, reopened_at: now, updated_at: now },
            { id: payout.id, status: 'failed' },
          )) === 1
        ) {
          this.deps.logger.error('a failed payout was mined: reopened', {
            chain: transfer.chain_id,
            payout_id: payout.id,
            txid: transfer.txid,
            failure_reason: payout.failure_reason,
          });
        }
        return;
      }
      await updateRows(
        em,
        'chain_payouts',
        { status: 'confirmed', confirmed_txid: transfer.txid, held: 1, updated_at: now },
        { id: payout.id, status: payout.status },
      );
      return;
    }
    if (transfer.status === 'reverted' && previous === 'confirmed' && payout.status === 'confirmed' && payout.confirmed_txid === transfer.txid) {
      if (
        (await updateRows(
          em,
          'chain_payouts',
          { status: 'broadcast', confirmed_txid: null, broadcast_height: null, updated_at: now },
          { id: payout.id, status: 'confirmed' },
        )) !== 1
      )
        return;
      for (const leg of await this.deps.payouts.legs(em, payout.id)) {
        const w = await em.findOneByOrFail(WithdrawalEntity, { id: leg.withdrawalId });
        if (w.status === 'completed') await this.deps.withdrawals.payoutMove(em, w, 'reorg', { confirmations: 0 });
      }
      this.deps.logger.warn('a completed payout left the chain (reorganisation): back to broadcast', {
        chain: transfer.chain_id,
        payout_id: payout.id,
        txid: transfer.txid,
      });
    }
  }
}
