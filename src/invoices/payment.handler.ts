import type { EntityManager } from 'typeorm';
import type { TransferHandler } from '../chains/types';
import type { ChainTransferRow, TransferStatus } from '../db/entities/chain';
import type { MoneyMovement, Receipt } from '../money/money-movement';
import type { InvoiceService } from './invoice.service';

/**
 * The invoice payment method: the transfer router's handler for incoming transfers to invoice
 * addresses. Inside the core's transaction it asks the money owner to book the payment (pending
 * when seen, credited less the invoice's platform fee when confirmed, taken back when reverted),
 * then recomputes the invoice through its state table, which sends the invoice's events.
 */
export class InvoicePaymentHandler implements TransferHandler {
  constructor(private readonly deps: { invoices: InvoiceService; money: MoneyMovement }) {}

  async onTransfer(em: EntityManager, transfer: ChainTransferRow, previous: TransferStatus | null): Promise<void> {
    const invoice = await this.deps.invoices.lockByAddress(em, transfer.address_id);
    if (!invoice) return;
    const receipt: Receipt = { transfer, accountId: invoice.account_id, type: 'invoice_payment', invoiceId: invoice.id, addressId: null };
    if (transfer.status === 'seen') await this.deps.money.receive(em, receipt);
    else if (transfer.status === 'confirmed') await this.deps.money.credit(em, receipt, { percent: invoice.fee_percent ?? '0', paidBy: invoice.fee_paid_by });
    else await this.deps.money.takeBack(em, receipt);
    await this.deps.invoices.recompute(em, invoice, { transfer, previous });
  }
}
