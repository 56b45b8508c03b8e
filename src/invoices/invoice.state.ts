import type { TransferStatus } from '../db/entities/chain';
import type { InvoiceRow, InvoiceStatus } from '../db/entities/money';
import { Amount, HUNDRED } from '../shared/amount';

/**
 * The invoice state table (SPEC "States and transitions: Invoice", PRODUCT §6), as one pure
 * function. The status and amounts are always recomputed from the invoice's fixed terms and every
 * transfer its address received, never patched step by step, so a revert or a late confirmation
 * lands on the same answer as if history had been different from the start.
 *
 * - A transfer is "in time" when it was first seen no later than `ttl_expires_at` (and before a
 *   cancel); only in-time transfers decide the status. Later ones are late payments: credited,
 *   counted in `paid_amount`, and they set `late_payment` on an expired, cancelled or final
 *   underpaid invoice.
 * - Paid: the in-time confirmed sum reaches `payer_amount` less the tolerance.
 * - Pending: not paid, and an in-time transfer is still waiting for confirmations.
 * - Underpaid: something in time confirmed, not enough, nothing else in time waiting; paid instead
 *   once the merchant accepted the underpayment (PRODUCT §16).
 * - Otherwise new before the TTL and expired after it; cancelled once cancelled.
 */

export interface InvoiceTerms {
  /** What the payer must send; null while the coin is unknown (no address, so no transfers). */
  payer_amount: string | null;
  tolerance_percent: string;
  ttl_expires_at: string;
  cancelled_at: string | null;
  /** The merchant accepted the invoice although underpaid (PRODUCT §16): underpaid counts as paid. */
  accepted?: boolean;
}

export interface TransferFact {
  amount: string;
  status: TransferStatus;
  /** When the transfer was first observed (RFC 3339). */
  seen_at: string;
}

export interface InvoiceState {
  status: InvoiceStatus;
  paid_amount: string;
  remaining_amount: string;
  overpaid_amount: string;
  late_payment: boolean;
  expired_at: string | null;
}

const time = (s: string): number => Date.parse(s);

/** An invoice row's fixed terms, as the state table reads them. */
export const termsOf = (
  r: Pick<InvoiceRow, 'payer_amount' | 'tolerance_percent' | 'ttl_expires_at' | 'cancelled_at'> & Partial<Pick<InvoiceRow, 'resolution'>>,
): InvoiceTerms => ({
  payer_amount: r.payer_amount,
  tolerance_percent: r.tolerance_percent,
  ttl_expires_at: r.ttl_expires_at,
  cancelled_at: r.cancelled_at,
  accepted: r.resolution === 'accepted_underpayment',
});

/** Whether a transfer first seen at `seenAt` counts toward the status (not a late payment). */
export function isInTime(terms: InvoiceTerms, seenAt: string): boolean {
  if (time(seenAt) > time(terms.ttl_expires_at)) return false;
  return terms.cancelled_at === null || time(seenAt) < time(terms.cancelled_at);
}

/** received × 100 ≥ required × (100 − tolerance): exact, no rounding. */
export function meetsAmount(received: Amount, required: Amount, tolerancePercent: string): boolean {
  return received.times(HUNDRED).gte(required.times(HUNDRED.minus(Amount.of(tolerancePercent))));
}

export function computeInvoiceState(terms: InvoiceTerms, transfers: readonly TransferFact[], now: Date): InvoiceState {
  let confirmedInTime = Amount.zero();
  let confirmedAll = Amount.zero();
  let waitingInTime = false;
  let lateConfirmed = false;
  for (const t of transfers) {
    if (t.status === 'reverted') continue;
    const inTime = isInTime(terms, t.seen_at);
    if (t.status === 'confirmed') {
      const a = Amount.of(t.amount);
      confirmedAll = confirmedAll.plus(a);
      if (inTime) confirmedInTime = confirmedInTime.plus(a);
      else lateConfirmed = true;
    } else if (inTime) {
      waitingInTime = true;
    }
  }

  const required = terms.payer_amount === null ? null : Amount.of(terms.payer_amount);
  const expiredByTime = now.getTime() > time(terms.ttl_expires_at);
  let status: InvoiceStatus;
  if (terms.cancelled_at !== null) status = 'cancelled';
  else if (required !== null && confirmedInTime.isPositive() && meetsAmount(confirmedInTime, required, terms.tolerance_percent)) status = 'paid';
  else if (waitingInTime) status = 'pending';
  // An underpayment the merchant accepted is paid; were every payment reverted it would not be.
  else if (confirmedInTime.isPositive()) status = terms.accepted ? 'paid' : 'underpaid';
  else status = expiredByTime ? 'expired' : 'new';

  const zero = Amount.zero();
  const remaining = required === null || status === 'paid' ? zero : maxOf(zero, required.minus(confirmedAll));
  const overpaid = required === null ? zero : maxOf(zero, confirmedAll.minus(required));
  return {
    status,
    paid_amount: confirmedAll.toString(),
    remaining_amount: remaining.toString(),
    overpaid_amount: overpaid.toString(),
    // PRODUCT §6: late funds on a paid invoice are an overpayment, not a late payment.
    late_payment: lateConfirmed && status !== 'paid',
    expired_at: status === 'expired' ? terms.ttl_expires_at : null,
  };
}

/** Underpaid stops accepting top-ups at the TTL (SPEC: then the state is final). */
export function isFinal(status: InvoiceStatus, ttlExpiresAt: string, now: Date): boolean {
  if (status === 'paid' || status === 'expired' || status === 'cancelled') return true;
  return status === 'underpaid' && now.getTime() > time(ttlExpiresAt);
}

const maxOf = (a: Amount, b: Amount): Amount => (a.gte(b) ? a : b);
