import { IsNull, type EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { ChainTransferRow, TransferStatus } from '../db/entities/chain';
import { LedgerEntryEntity, TransactionEntity, type InvoiceRow, type TransactionRow } from '../db/entities/money';
import { insertRow, placeholder, rawQuery, updateRows } from '../db/raw';
import type { TransferSink } from '../chains/types';
import { accountBook, EXTERNAL_BOOK, FEE_BOOK, type Ledger, type Movement } from '../ledger/ledger';
import { iso, type Clock } from '../shared/clock';
import { newId } from '../shared/ids';
import { Amount, MAX_DECIMALS } from '../shared/money';
import type { InvoiceService } from './invoice.service';

const HUNDRED = Amount.of(100);

/**
 * The platform fee of one incoming transfer (PRODUCT §6). The merchant pays it: the fee is the
 * account's percentage of the gross, rounded up. The payer pays it: the gross already carries it,
 * so the merchant keeps gross × 100 / (100 + p) rounded down, which is at least `amount_crypto`
 * for an exact payment of `payer_amount`.
 */
export function feeOf(gross: Amount, feePercent: string, paidBy: InvoiceRow['fee_paid_by'], decimals: number): { fee: Amount; net: Amount } {
  const p = Amount.of(feePercent);
  if (!p.isPositive()) return { fee: Amount.zero(), net: gross };
  if (paidBy === 'payer') {
    const net = gross.times(HUNDRED).div(HUNDRED.plus(p), decimals, 'down');
    return { fee: gross.minus(net), net };
  }
  const fee = gross.percent(p, decimals, 'up');
  return { fee, net: gross.minus(fee) };
}

/**
 * The payments side of the chain core for invoice addresses (TransferSink). Inside the core's
 * transaction it keeps the merchant's transaction row in step with the transfer (pending when
 * seen, confirmed and credited less the platform fee when confirmed, an `adjustment` when a
 * credited transfer is reverted), then recomputes the invoice through the state table. Transfers
 * to addresses that are not an invoice's are left to other sinks. A payment's reads and writes are
 * plain prepared SQL: through TypeORM they took 1–2 ms a payment, nearly all of a paying block's
 * time in the core (`npm run bench chains`). A take-back (reorganisations only) keeps TypeORM.
 */
export class PaymentSink implements TransferSink {
  constructor(
    private readonly deps: { invoices: InvoiceService; ledger: Ledger; catalog: Catalog; clock: Clock },
  ) {}

  async onTransfer(em: EntityManager, transfer: ChainTransferRow, previous: TransferStatus | null): Promise<void> {
    const invoice = await this.deps.invoices.lockByAddress(em, transfer.address_id);
    if (!invoice) return;
    const [active] = await rawQuery<TransactionRow>(
      em,
      `SELECT * FROM transactions WHERE chain_transfer_id = ${placeholder(em, 1)} AND type = 'invoice_payment' AND reverses_id IS NULL ORDER BY created_at DESC LIMIT 1`,
      [transfer.id],
    );
    const current = active && active.status !== 'reverted' ? active : null;
    if (transfer.status === 'seen') {
      if (!current) await this.insertPayment(em, invoice, transfer);
    } else if (transfer.status === 'confirmed') {
      await this.credit(em, invoice, transfer, current ?? (await this.insertPayment(em, invoice, transfer)));
    } else if (current) {
      await this.takeBack(em, invoice, current);
    }
    await this.deps.invoices.recompute(em, invoice, { transfer, previous });
  }

  private async insertPayment(em: EntityManager, invoice: InvoiceRow, t: ChainTransferRow): Promise<TransactionRow> {
    const now = iso(this.deps.clock.now());
    const row: TransactionRow = {
      id: newId(),
      account_id: invoice.account_id,
      type: 'invoice_payment',
      status: 'pending',
      coin_id: t.coin_id,
      amount: t.amount,
      fee: null,
      net_amount: null,
      txid: t.txid,
      chain_transfer_id: t.id,
      invoice_id: invoice.id,
      address_id: null,
      withdrawal_id: null,
      reverses_id: null,
      created_at: now,
      confirmed_at: null,
      updated_at: now,
    };
    await insertRow(em, 'transactions', row);
    return row;
  }

  /** Credits the account with the net and the fee book with the fee, and confirms the row. */
  private async credit(em: EntityManager, invoice: InvoiceRow, t: ChainTransferRow, tx: TransactionRow): Promise<void> {
    if (tx.status === 'confirmed') return;
    const decimals = this.deps.catalog.coin(t.coin_id)?.decimals ?? MAX_DECIMALS;
    const { fee, net } = feeOf(Amount.of(t.amount), invoice.fee_percent ?? '0', invoice.fee_paid_by, decimals);
    const movements: Movement[] = [];
    if (net.isPositive()) movements.push({ coinId: t.coin_id, debit: EXTERNAL_BOOK, credit: accountBook(invoice.account_id), amount: net, code: 'invoice_payment', refId: tx.id });
    if (fee.isPositive()) movements.push({ coinId: t.coin_id, debit: EXTERNAL_BOOK, credit: FEE_BOOK, amount: fee, code: 'platform_fee', refId: tx.id });
    await this.deps.ledger.post(em, movements);
    const now = iso(this.deps.clock.now());
    await updateRows(em, 'transactions', { status: 'confirmed', fee: fee.toString(), net_amount: net.toString(), confirmed_at: now, updated_at: now }, { id: tx.id, status: 'pending' });
  }

  /** A reverted transfer: a pending row is marked reverted; a credited one is taken back by an adjustment. */
  private async takeBack(em: EntityManager, invoice: InvoiceRow, tx: TransactionRow): Promise<void> {
    const now = iso(this.deps.clock.now());
    await em.update(TransactionEntity, { id: tx.id, status: tx.status }, { status: 'reverted', updated_at: now });
    if (tx.status !== 'confirmed') return;
    const adjustmentId = newId();
    const entries = await em.find(LedgerEntryEntity, { where: { ref_id: tx.id, reverses_id: IsNull() } });
    await this.deps.ledger.reverse(em, entries.filter((e) => e.kind === 'posted').map((e) => e.id), 'adjustment', adjustmentId);
    const negate = (s: string | null): string | null => (s === null ? null : Amount.zero().minus(Amount.of(s)).toString());
    await em.insert(TransactionEntity, {
      ...tx,
      id: adjustmentId,
      account_id: invoice.account_id,
      type: 'adjustment',
      status: 'confirmed',
      amount: negate(tx.amount)!,
      fee: negate(tx.fee),
      net_amount: negate(tx.net_amount),
      reverses_id: tx.id,
      created_at: now,
      confirmed_at: now,
      updated_at: now,
    });
  }
}
