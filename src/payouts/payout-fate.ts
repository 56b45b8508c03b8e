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
  { step: 'mined'; txid: string; confirmations: number } | { step: 'cancel_mined' } | { step: 'taken' } | { step: 'expired' } | { step: 'send' };

export function payoutFate(ev: PayoutEvidence, cancelTxids: ReadonlySet<string>, expired: boolean): PayoutFate {
  if (ev.mined)
    return cancelTxids.has(ev.mined.txid) ? { step: 'cancel_mined' } : { step: 'mined', txid: ev.mined.txid, confirmations: ev.mined.confirmations };
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

/**
 * A payout whose current candidate the node proved dead (`broadcastOutcome` said `dead`): a rail
 * that renews signs it anew (Tron: a fresh expiration); otherwise a batch gives up and sends each
 * withdrawal alone (the node does not say which output it refused), and a single one fails.
 */
export function afterRefusal(canRenew: boolean, legs: number): 'renew' | 'split' | 'fail' {
  if (canRenew) return 'renew';
  return legs > 1 ? 'split' : 'fail';
}

/**
 * A broadcast payout not mined yet, after its candidate went to the node again: back from a
 * reorganisation (no broadcast height), its wait before a replacement starts now; waiting
 * `replaceAfterBlocks` blocks since its broadcast, it is replaced with a higher fee. A payout still
 * `signed` or being cancelled is never replaced.
 */
export function replacementStep(
  p: { status: 'signed' | 'broadcast'; broadcastHeight: number | null; cancelling: boolean },
  tip: number,
  replaceAfterBlocks: number,
): 'wait' | 'restart_wait' | 'replace' {
  if (p.status !== 'broadcast' || p.cancelling) return 'wait';
  if (p.broadcastHeight === null) return 'restart_wait';
  return tip - p.broadcastHeight >= replaceAfterBlocks ? 'replace' : 'wait';
}

/**
 * The highest block the chain core holds final (its `confirmations` deep, at least one) when it
 * scanned up to `scanned`; null when there is none yet, so no expiration can be proven.
 */
export function finalHeight(scanned: number | null, confirmations: number): number | null {
  if (scanned === null) return null;
  const final = scanned - Math.max(1, confirmations) + 1;
  return final > 0 ? final : null;
}
