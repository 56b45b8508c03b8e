import type { PayoutEvidence } from './payout-evidence';

/**
 * What the chain core's blocks say a payout's next step is (PRODUCT §14), before the node is
 * asked anything: `mined` (a payment candidate in a scanned block: its withdrawals follow its
 * depth), `cancel_mined` (its cancel is: the withdrawals fail once it is confirmed), `taken`
 * (another transaction used what it spends, confirmed: it can never be mined), `expired` (Tron:
 * its expiration passed under a final block: signed anew once, or failed if a cancel was asked),
 * or `send` (nothing proven: its current candidate goes to the node again).
 */
export type PayoutFate =
  | { step: 'mined'; txid: string; confirmations: number }
  | { step: 'cancel_mined' }
  | { step: 'taken' }
  | { step: 'expired' }
  | { step: 'send' };

export function payoutFate(ev: PayoutEvidence, cancelTxids: ReadonlySet<string>, expired: boolean): PayoutFate {
  if (ev.mined) return cancelTxids.has(ev.mined.txid) ? { step: 'cancel_mined' } : { step: 'mined', txid: ev.mined.txid, confirmations: ev.mined.confirmations };
  if (ev.rival) return { step: 'taken' };
  return expired ? { step: 'expired' } : { step: 'send' };
}

/** A payout's state as far as a broadcast's answer matters. */
export interface SendState {
  /** Stored, no node seen holding it yet (`signed`), or held once (`broadcast`). */
  status: 'signed' | 'broadcast';
  /** Whether any node ever held a candidate of it. */
  held: boolean;
  cancelling: boolean;
}

/**
 * What the node's answer to a broadcast means for the payout (PRODUCT §14): `held` (the node has
 * it: a payout still `signed` becomes `broadcast`), `dead` (refused for what it is, and no node ever
 * held any of its candidates: it can never be mined), or `nothing` (busy, rate limited, a mempool
 * conflict, "missing inputs", or a refusal of a payout that spread before: nothing is proven).
 */
export function broadcastOutcome(answer: { sent: boolean; refused: boolean }, s: SendState): 'held' | 'dead' | 'nothing' {
  if (answer.sent) return 'held';
  return answer.refused && s.status === 'signed' && !s.held && !s.cancelling ? 'dead' : 'nothing';
}
