import type { RefundService } from '../refunds/refund.service';
import type { Job } from './scheduler';

/** Expires refunds whose payer link went unused past its time (PRODUCT §16), every minute; run at start, it catches up after downtime. */
export function expireRefundLinksJob(refunds: RefundService): Job {
  return {
    name: 'expire-refund-links',
    schedule: '*/1 * * * *',
    run: async (signal) => void (await refunds.expireDue(signal)),
  };
}
