import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { AddressRow, ChainTransferRow } from '../db/entities/chain';
import type { TransactionRow } from '../db/entities/money';
import { StrayEntity, type StrayRow, type StrayStatus } from '../db/entities/stray';
import { applyKeyset } from '../db/keyset';
import { insertRowIfAbsent, placeholder, rawQuery, updateRows } from '../db/raw';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import type { MoneyMovement, Receipt } from '../money/money-movement';
import { iso, type Clock } from '../shared/clock';
import { conflict, notFound } from '../shared/errors';
import type { EventType } from '../shared/events';
import { newTimeOrderedId } from '../shared/ids';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import { nextStrayStatus } from './stray.state';
import { presentStray, type StrayView } from './stray.view';

/** The filters of GET /v1/strays. */
export interface StrayFilters {
  status?: StrayStatus;
  /** The network (chain id) the coins arrived on. */
  network?: string;
  invoice_id?: string;
}

export interface StrayServiceDeps {
  store: Store;
  catalog: Catalog;
  money: MoneyMovement;
  outbox: Outbox;
  clock: Clock;
}

/**
 * Stray payments (PRODUCT §17): recorded by the chain core's transfer router (`onTransfer`, inside
 * its transaction) and resolved by the merchant. Every change of a row is guarded by the status it
 * was read with; money moves only through the money owner, after the guard held.
 */
export class StrayService {
  constructor(private readonly deps: StrayServiceDeps) {}

  /**
   * A stray transfer's status changed (the chain core's transaction): first seen, a row and
   * `stray.detected`; reverted, the stray is reverted (a credited one taken back by an adjustment);
   * seen again after that, open again.
   */
  async onTransfer(em: EntityManager, transfer: ChainTransferRow): Promise<void> {
    if (transfer.direction !== 'incoming') return;
    const [found] = await rawQuery<StrayRow>(em, `SELECT * FROM strays WHERE transfer_id = ${placeholder(em, 1)}`, [transfer.id]);
    if (transfer.status === 'reverted') {
      if (!found) return;
      const next = nextStrayStatus(found.status, 'chain_reverted');
      if (!next) return;
      const moved = await this.move(em, found, next);
      if (!moved) return;
      if (found.status === 'credited' || found.status === 'refunded') await this.deps.money.takeBack(em, { transfer, type: 'deposit' });
      await this.emit(em, 'stray.reverted', moved);
      return;
    }
    if (found) {
      const next = nextStrayStatus(found.status, 'chain_again');
      if (next) await this.move(em, found, next);
      return;
    }
    const [address] = await rawQuery<AddressRow>(em, `SELECT * FROM addresses WHERE id = ${placeholder(em, 1)}`, [transfer.address_id]);
    if (!address) return;
    const at = this.deps.clock.now();
    const now = iso(at);
    const row: StrayRow = {
      id: newTimeOrderedId(at.getTime()),
      account_id: transfer.account_id,
      chain_id: transfer.chain_id,
      coin_id: transfer.coin_id,
      transfer_id: transfer.id,
      amount: transfer.amount,
      txid: transfer.txid,
      to_address: transfer.address,
      invoice_id: address.purpose === 'invoice' ? address.invoice_id : null,
      address_id: address.purpose === 'static' ? address.id : null,
      status: 'open',
      created_at: now,
      updated_at: now,
    };
    if (await insertRowIfAbsent(em, 'strays', row)) await this.emit(em, 'stray.detected', row);
  }

  async get(accountId: string, id: string): Promise<StrayView> {
    return presentStray(this.deps.catalog, await this.find(this.deps.store.read, accountId, id));
  }

  async page(accountId: string, f: StrayFilters, page: PageRequest): Promise<Page<StrayView>> {
    const qb = this.deps.store.read.createQueryBuilder(StrayEntity, 's').where('s.account_id = :accountId', { accountId });
    if (f.status !== undefined) qb.andWhere('s.status = :status', { status: f.status });
    if (f.network !== undefined) qb.andWhere('s.chain_id = :network', { network: f.network });
    if (f.invoice_id !== undefined) qb.andWhere('s.invoice_id = :invoiceId', { invoiceId: f.invoice_id });
    const rows = await applyKeyset(qb, 's', page).getMany();
    return toPage(rows, page, (r) => presentStray(this.deps.catalog, r));
  }

  /**
   * POST /v1/strays/{id}/credit: an open stray whose transfer is confirmed is credited to the
   * account's balance as a `deposit` (less the account's platform fee), once: the guarded move
   * open → credited first, then the money owner credits. Anything else is 409 `conflict`.
   */
  async credit(accountId: string, id: string): Promise<StrayView> {
    return this.deps.store.write(async (em) => {
      const [account] = await rawQuery<{ platform_fee_percent: string }>(em, `SELECT platform_fee_percent FROM accounts WHERE id = ${placeholder(em, 1)}`, [
        accountId,
      ]);
      const { stray } = await this.resolve(em, accountId, id, 'credit', account?.platform_fee_percent ?? '0');
      await this.emit(em, 'stray.credited', stray);
      return presentStray(this.deps.catalog, stray);
    });
  }

  /**
   * POST /v1/strays/{id}/refund, in the refund's creating transaction (the refunds service calls
   * it): the guarded move open → refunded, then the money owner credits the transfer as a deposit
   * without a platform fee (it goes back; it was never the merchant's), which the refund then takes
   * from. Its deposit row. 409 `conflict` as for a credit.
   */
  creditForRefund(em: EntityManager, accountId: string, id: string): Promise<{ stray: StrayRow; deposit: TransactionRow }> {
    return this.resolve(em, accountId, id, 'refund', '0');
  }

  /**
   * The merchant's decision on an open stray whose transfer is confirmed (409 `conflict` otherwise):
   * the guarded move first, then the money owner credits the transfer as a `deposit` less `feePercent`.
   */
  private async resolve(
    em: EntityManager,
    accountId: string,
    id: string,
    move: 'credit' | 'refund',
    feePercent: string,
  ): Promise<{ stray: StrayRow; deposit: TransactionRow }> {
    const row = await this.find(em, accountId, id, true);
    const to = nextStrayStatus(row.status, move);
    if (!to) throw notOpen(row.status);
    const [transfer] = await rawQuery<ChainTransferRow>(em, `SELECT * FROM chain_transfers WHERE id = ${placeholder(em, 1)}`, [row.transfer_id]);
    if (!transfer || transfer.status !== 'confirmed')
      throw conflict('the stray payment is not confirmed on its chain yet', { reason: 'stray_not_confirmed', confirmations: transfer?.confirmations ?? 0 });
    const moved = await this.move(em, row, to);
    if (!moved) throw conflict('the stray payment changed meanwhile', { reason: 'stray_not_open' });
    const receipt: Receipt = { transfer, accountId, type: 'deposit', invoiceId: null, addressId: row.address_id };
    if (!(await this.deps.money.credit(em, receipt, { percent: feePercent, paidBy: 'merchant' })))
      throw new Error(`stray ${row.id}: its transfer was credited already`);
    const [deposit] = await rawQuery<TransactionRow>(
      em,
      `SELECT * FROM transactions WHERE chain_transfer_id = ${placeholder(em, 1)} AND type = 'deposit' AND status <> 'reverted' AND reverses_id IS NULL`,
      [transfer.id],
    );
    if (!deposit) throw new Error(`stray ${row.id}: its deposit was not written`);
    return { stray: moved, deposit };
  }

  /** An open, confirmed stray as a refund starts from (read outside the write; the write checks again). */
  async refundable(accountId: string, id: string): Promise<StrayRow> {
    const row = await this.find(this.deps.store.read, accountId, id);
    if (!nextStrayStatus(row.status, 'refund')) throw notOpen(row.status);
    return row;
  }

  private async find(em: EntityManager, accountId: string, id: string, lock = false): Promise<StrayRow> {
    const forUpdate = lock && em.connection.options.type === 'postgres' ? ' FOR UPDATE' : '';
    const [row] = await rawQuery<StrayRow>(em, `SELECT * FROM strays WHERE id = ${placeholder(em, 1)} AND account_id = ${placeholder(em, 2)}${forUpdate}`, [
      id,
      accountId,
    ]);
    if (!row) throw notFound('stray payment');
    return row;
  }

  /** The row moved to `status`, guarded by the status it was read with; null when another change came first. */
  private async move(em: EntityManager, row: StrayRow, status: StrayStatus): Promise<StrayRow | null> {
    const updated_at = iso(this.deps.clock.now());
    if ((await updateRows(em, 'strays', { status, updated_at }, { id: row.id, status: row.status })) !== 1) return null;
    return { ...row, status, updated_at };
  }

  private async emit(em: EntityManager, type: EventType, row: StrayRow): Promise<void> {
    await this.deps.outbox.emit(em, {
      accountId: row.account_id,
      type,
      objectId: row.id,
      data: { stray: presentStray(this.deps.catalog, row) },
      at: this.deps.clock.now(),
    });
  }
}

const notOpen = (status: StrayStatus) => conflict(`the stray payment is ${status}, not open`, { reason: 'stray_not_open', status });
