import type { InvoiceService } from '../invoices/invoice.service';
import type { Job } from './scheduler';

/** Expires `new` invoices past their TTL every 10 seconds; run at start, it catches up after downtime. */
export function expireInvoicesJob(invoices: InvoiceService): Job {
  return {
    name: 'expire-invoices',
    schedule: '*/10 * * * * *',
    run: async (signal) => void (await invoices.expireDue(signal)),
  };
}
