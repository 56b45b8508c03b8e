import type { Store } from '../db/store';
import { placeholder, rawQuery, updateRows } from '../db/raw';
import { iso, type Clock } from '../shared/clock';
import { conflict, notFound } from '../shared/errors';
import type { Actor, TeamService } from '../team/team.service';
import type { PayoutStore } from './payout-store';

/** What `coinkeep payouts cancel` answers. */
export interface PayoutCancelView {
  payout_id: string;
  chain_id: string;
  account_id: string;
  status: string;
  cancel_requested_at: string;
  withdrawal_ids: string[];
}

/**
 * `coinkeep payouts cancel PAYOUT_ID --as EMAIL --otp CODE` (PRODUCT §14): an owner or admin of
 * the paying account asks to end a payout that is not mined (one a node answered and dropped, say).
 * Only the request is stored here; the chain's payout worker, which alone runs its rail, then signs
 * the cancel (the payout's coins or nonce paid back to the wallet), stores it before broadcasting
 * it, and fails the withdrawals once the cancel has the chain's confirmations. Whichever of the
 * payment and the cancel is mined decides: the payment completes the withdrawals as ever.
 */
export class PayoutCancels {
  constructor(private readonly deps: { store: Store; payouts: PayoutStore; team: TeamService; clock: Clock }) {}

  async request(payoutId: string, actor: Actor): Promise<PayoutCancelView> {
    return this.deps.store.write(async (em) => {
      const row = await this.deps.payouts.row(em, payoutId);
      if (!row) throw notFound('payout');
      const who = await this.deps.team.authorize(em, row.account_id, actor, { roles: ['owner', 'admin'], otp: true });
      if (row.status !== 'signed' && row.status !== 'broadcast')
        throw conflict(`only a payout not yet confirmed can be cancelled; this one is ${row.status}`, { status: row.status });
      if (row.cancel_requested_at !== null)
        throw conflict('a cancel of this payout was asked already', { reason: 'cancel_requested', cancel_requested_at: row.cancel_requested_at });
      const p = (i: number) => placeholder(em, i);
      const [mined] = await rawQuery<{ txid: string }>(
        em,
        `SELECT t.txid FROM chain_payout_candidates k JOIN chain_transfers t ON t.chain_id = k.chain_id AND t.txid = k.txid ` +
          `WHERE k.payout_id = ${p(1)} AND t.direction = 'outgoing' AND t.status <> 'reverted' LIMIT 1`,
        [row.id],
      );
      if (mined) throw conflict("the payout is mined already; it completes at the chain's confirmations", { reason: 'payout_mined', txid: mined.txid });
      const now = iso(this.deps.clock.now());
      if ((await updateRows(em, 'chain_payouts', { cancel_requested_at: now, updated_at: now }, { id: row.id, status: row.status })) !== 1) {
        throw conflict('the payout changed meanwhile; read it again');
      }
      const legs = await this.deps.payouts.legs(em, row.id);
      const withdrawals = legs.map((l) => l.withdrawalId);
      await this.deps.team.log(em, row.account_id, who, 'payout.cancel_requested', { payout_id: row.id, chain_id: row.chain_id, withdrawal_ids: withdrawals });
      return {
        payout_id: row.id,
        chain_id: row.chain_id,
        account_id: row.account_id,
        status: row.status,
        cancel_requested_at: now,
        withdrawal_ids: withdrawals,
      };
    });
  }
}
