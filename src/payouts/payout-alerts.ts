import type { EntityManager } from 'typeorm';
import { placeholder, rawQuery } from '../db/raw';
import { iso } from '../shared/clock';

/** How long a reopened payout stays named in `coinkeep status`. */
const REOPENED_SHOWN_DAYS = 7;

/**
 * A payout an operator must know about (PRODUCT §14): `stuck`, not mined `stuck_alert_minutes`
 * after its first broadcast (the node may have dropped it: `coinkeep payouts cancel` ends it
 * safely); `cancelling`, a cancel asked and not yet confirmed; `reopened`, failed and then seen
 * mined, its withdrawals charged again.
 */
export interface PayoutAlert {
  kind: 'stuck' | 'cancelling' | 'reopened';
  chain_id: string;
  payout_id: string;
  account_id: string;
  /** The txid of its current candidate (the mined one, once reopened). */
  txid: string;
  withdrawal_ids: string[];
  /** When it was first broadcast (stuck, cancelling) or reopened. */
  since: string | null;
  failure_reason: string | null;
}

/** Every payout to name now, stuck ones first, oldest first. */
export async function payoutAlerts(em: EntityManager, now: Date, stuckAlertMinutes: number): Promise<PayoutAlert[]> {
  const p = (i: number) => placeholder(em, i);
  const stuckBefore = iso(new Date(now.getTime() - stuckAlertMinutes * 60_000));
  const reopenedAfter = iso(new Date(now.getTime() - REOPENED_SHOWN_DAYS * 86_400_000));
  const rows = await rawQuery<{
    id: string;
    chain_id: string;
    account_id: string;
    status: string;
    first_broadcast_at: string | null;
    cancel_requested_at: string | null;
    reopened_at: string | null;
    confirmed_txid: string | null;
    failure_reason: string | null;
  }>(
    em,
    `SELECT c.id, c.chain_id, c.account_id, c.status, c.first_broadcast_at, c.cancel_requested_at, c.reopened_at, c.confirmed_txid, c.failure_reason FROM chain_payouts c ` +
      `WHERE (c.status IN ('signed', 'broadcast') AND (c.cancel_requested_at IS NOT NULL OR c.first_broadcast_at <= ${p(1)}) AND NOT EXISTS (` +
      `SELECT 1 FROM chain_payout_candidates k JOIN chain_transfers t ON t.chain_id = k.chain_id AND t.txid = k.txid ` +
      `WHERE k.payout_id = c.id AND t.direction = 'outgoing' AND t.status <> 'reverted')) ` +
      `OR (c.reopened_at IS NOT NULL AND c.reopened_at >= ${p(2)}) ORDER BY c.first_broadcast_at, c.id`,
    [stuckBefore, reopenedAfter],
  );
  if (rows.length === 0) return [];
  const alerts: PayoutAlert[] = [];
  for (const r of rows) {
    const [current] = await rawQuery<{ txid: string }>(em, `SELECT txid FROM chain_payout_candidates WHERE payout_id = ${p(1)} ORDER BY seq DESC LIMIT 1`, [
      r.id,
    ]);
    const legs = await rawQuery<{ withdrawal_id: string }>(em, `SELECT withdrawal_id FROM chain_payout_legs WHERE payout_id = ${p(1)} ORDER BY "output"`, [
      r.id,
    ]);
    const kind = r.reopened_at !== null ? 'reopened' : r.cancel_requested_at !== null ? 'cancelling' : 'stuck';
    alerts.push({
      kind,
      chain_id: r.chain_id,
      payout_id: r.id,
      account_id: r.account_id,
      txid: kind === 'reopened' ? r.confirmed_txid! : current!.txid,
      withdrawal_ids: legs.map((l) => l.withdrawal_id),
      since: kind === 'reopened' ? r.reopened_at : kind === 'cancelling' ? r.cancel_requested_at : r.first_broadcast_at,
      failure_reason: r.failure_reason,
    });
  }
  const order = { stuck: 0, cancelling: 1, reopened: 2 };
  return alerts.sort((a, b) => order[a.kind] - order[b.kind]);
}
