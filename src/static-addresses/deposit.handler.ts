import type { EntityManager } from 'typeorm';
import type { TransferHandler } from '../chains/types';
import type { ChainTransferRow, TransferStatus } from '../db/entities/chain';
import type { TransactionRow } from '../db/entities/money';
import { placeholder, rawQuery } from '../db/raw';
import type { MoneyMovement, Receipt } from '../money/money-movement';
import type { StaticAddressService } from './static-address.service';
import { presentDeposit, type DepositRow } from './static-address.view';

/**
 * The static-address payment method: the transfer router's handler for incoming transfers to
 * static addresses. Each transfer is its own deposit. Inside the core's transaction it asks the
 * money owner to book it (pending when seen, credited less the account's platform fee when
 * confirmed, taken back by an adjustment when reverted) and, when that changed something, writes
 * the `deposit.*` event in the same transaction.
 */
export class DepositHandler implements TransferHandler {
  constructor(private readonly deps: { addresses: StaticAddressService; money: MoneyMovement }) {}

  async onTransfer(em: EntityManager, transfer: ChainTransferRow, _previous: TransferStatus | null): Promise<void> {
    const { addresses, money } = this.deps;
    const found = await addresses.lockForDeposit(em, transfer.address_id);
    if (!found) return;
    const receipt: Receipt = { transfer, accountId: found.account_id, type: 'deposit', invoiceId: null, addressId: found.id };
    if (transfer.status === 'reverted') {
      if (!(await money.takeBack(em, receipt))) return;
      const [adjustment] = await this.rows(em, transfer, 'adjustment');
      await addresses.emitDeposit(em, 'deposit.reverted', found, await this.deposit(em, transfer), {
        adjustment: adjustment ? { transaction_id: adjustment.id, amount: adjustment.amount, net_amount: adjustment.net_amount } : null,
      });
      return;
    }
    const address = await addresses.noteDeposit(em, found, transfer.seen_at);
    if (transfer.status === 'seen') {
      if (await money.receive(em, receipt)) await addresses.emitDeposit(em, 'deposit.pending', address, await this.deposit(em, transfer));
      return;
    }
    const [account] = await rawQuery<{ platform_fee_percent: string }>(em, `SELECT platform_fee_percent FROM accounts WHERE id = ${placeholder(em, 1)}`, [
      found.account_id,
    ]);
    if (await money.credit(em, receipt, { percent: account?.platform_fee_percent ?? '0', paidBy: 'merchant' })) {
      await addresses.emitDeposit(em, 'deposit.confirmed', address, await this.deposit(em, transfer));
    }
  }

  /** The transfer's deposit row as it stands after the change (its live row, if it was booked again after a reversal). */
  private async deposit(em: EntityManager, transfer: ChainTransferRow) {
    const [row] = await this.rows(em, transfer, 'deposit');
    return presentDeposit({ ...row!, confirmations: transfer.confirmations });
  }

  private rows(em: EntityManager, transfer: ChainTransferRow, type: TransactionRow['type']): Promise<DepositRow[]> {
    return rawQuery<DepositRow>(
      em,
      `SELECT * FROM transactions WHERE chain_transfer_id = ${placeholder(em, 1)} AND type = ${placeholder(em, 2)} ORDER BY CASE WHEN status = 'reverted' THEN 1 ELSE 0 END, created_at DESC, id DESC LIMIT 1`,
      [transfer.id, type],
    );
  }
}
