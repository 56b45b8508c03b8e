/** The event types of PRODUCT §10 (§16's refunds and §17's strays): the only names an outbox row or a webhook subscription may carry. */
export const EVENT_TYPES = [
  'invoice.pending',
  'invoice.paid',
  'invoice.underpaid',
  'invoice.expired',
  'invoice.late_payment',
  'invoice.reverted',
  'deposit.pending',
  'deposit.confirmed',
  'deposit.reverted',
  'withdrawal.review',
  'withdrawal.awaiting_approval',
  'withdrawal.processing',
  'withdrawal.broadcast',
  'withdrawal.completed',
  'withdrawal.failed',
  'withdrawal.rejected',
  'withdrawal.cancelled',
  'static_address.archive_warning',
  'static_address.archived',
  'static_address.restored',
  'stray.detected',
  'stray.credited',
  'stray.reverted',
  'refund.created',
  'refund.address_provided',
  'refund.completed',
  'refund.failed',
  'refund.cancelled',
  'refund.expired',
  'ping',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);
export const isEventType = (s: unknown): s is EventType => typeof s === 'string' && KNOWN.has(s);
