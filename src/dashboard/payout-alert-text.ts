import type { PayoutAlert } from '../admin/contract';

/** One line naming a payout to look at, for `coinkeep status` and the dashboard's overview. */
export function payoutAlertText(a: PayoutAlert): string {
  const withdrawals = `withdrawals ${a.withdrawal_ids.join(', ')}`;
  if (a.kind === 'reopened')
    return `payout ${a.payout_id} REOPENED at ${a.since}: failed (${a.failure_reason ?? 'no reason'}), then mined in ${a.txid}; ${withdrawals} completed and charged again`;
  if (a.kind === 'cancelling') return `payout ${a.payout_id} cancelling since ${a.since}: ${withdrawals} fail once the cancel is confirmed`;
  return `payout ${a.payout_id} STUCK: ${a.txid} not mined since ${a.since} (${withdrawals}); if the node dropped it, coinkeep payouts cancel ${a.payout_id}`;
}
