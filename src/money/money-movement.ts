import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { ChainTransferRow } from '../db/entities/chain';
import type { LedgerEntryRow, TransactionRow, TransactionType } from '../db/entities/money';
import { insertRow, insertRowIfAbsent, placeholder, rawQuery, rawRun, returning, updateRows } from '../db/raw';
import { accountBook, type BookBalance, type Ledger } from '../ledger/ledger';
import { iso, type Clock } from '../shared/clock';
import { newTimeOrderedId } from '../shared/ids';
import { Amount, MAX_DECIMALS } from '../shared/amount';
import { feeOf, type FeeTerms } from './fee';
import {
  creditPostings,
  failedPayoutCharge,
  holdPostings,
  networkChangePostings,
  ownSendPostings,
  payoutFeeChange,
  rechargePostings,
  takeBackRow,
} from './postings';

/** An incoming chain transfer to one of an account's addresses, as its transaction row books it. */
export interface Receipt {
  transfer: ChainTransferRow;
  accountId: string;
  type: Extract<TransactionType, 'invoice_payment' | 'deposit'>;
  invoiceId: string | null;
  addressId: string | null;
}

/** Money of an account reserved for a withdrawal until it is settled or voided. */
export interface Hold {
  accountId: string;
  coinId: string;
  /** The withdrawal held for; null while a refund waits for its address (`refundId` then says whose hold it is). */
  withdrawalId: string | null;
  /** The refund the money is held for (PRODUCT §16), if any. */
  refundId?: string | null;
  /** The row's amount. */
  amount: Amount;
  /** Where the held money goes once settled: each a pending ledger transfer from the account's book. */
  legs: ReadonlyArray<{ book: string; amount: Amount; code: string }>;
}

/**
 * The one owner of money movement (ARCHITECTURE "The money path, both ways"): the only writer of
 * the `transactions` table and the only caller of the ledger for account money. Every operation
 * runs inside the caller's write transaction and makes its state change first, guarded (an insert
 * that a unique index refuses once a live row exists, an `UPDATE ... WHERE status = ?` whose row
 * count is checked); it posts to the ledger only when its guard held, so an operation made twice
 * (a rescan, two daemons, a retry) moves the money once with or without a lock around it. The
 * payment path's statements are plain prepared SQL: they run for every payment inside the chain
 * core's transaction (`npm run bench chains`).
 */
export class MoneyMovement {
  constructor(private readonly deps: { ledger: Ledger; catalog: Catalog; clock: Clock }) {}

  /** An incoming transfer seen: its pending row, once. Whether this call wrote it. */
  async receive(em: EntityManager, r: Receipt): Promise<boolean> {
    const at = this.deps.clock.now();
    const now = iso(at);
    const t = r.transfer;
    return insertRowIfAbsent(em, 'transactions', {
      // Time-ordered, as are the transfer's row and the event written with it: a block's payments
      // land on the last pages of the primary-key indexes (and of those keyed by a transfer's id)
      // instead of on a random page each, and its commit writes fewer pages (10 payments with
      // 300,000 rows in each table before them: about 80 pages of write-ahead log, not 120).
      id: newTimeOrderedId(at.getTime()),
      account_id: r.accountId,
      type: r.type,
      status: 'pending',
      coin_id: t.coin_id,
      amount: t.amount,
      fee: null,
      net_amount: null,
      txid: t.txid,
      chain_transfer_id: t.id,
      invoice_id: r.invoiceId,
      address_id: r.addressId,
      withdrawal_id: null,
      reverses_id: null,
      created_at: now,
      confirmed_at: null,
      updated_at: now,
    } satisfies TransactionRow);
  }

  /**
   * An incoming transfer confirmed: its row becomes confirmed with the platform fee, the account's
   * book is credited with the net and the fee book with the fee. Whether this call credited.
   */
  async credit(em: EntityManager, r: Receipt, terms: FeeTerms): Promise<boolean> {
    const t = r.transfer;
    const decimals = this.deps.catalog.coin(t.coin_id)?.decimals ?? MAX_DECIMALS;
    const { fee, net } = feeOf(Amount.of(t.amount), terms, decimals);
    const confirm = async (): Promise<{ id: string } | undefined> => {
      const now = iso(this.deps.clock.now());
      const p = (i: number) => placeholder(em, i);
      const [row] = await returning<{ id: string }>(
        em,
        `UPDATE transactions SET status = 'confirmed', fee = ${p(1)}, net_amount = ${p(2)}, confirmed_at = ${p(3)}, updated_at = ${p(4)}
         WHERE chain_transfer_id = ${p(5)} AND type = ${p(6)} AND status = 'pending' AND reverses_id IS NULL RETURNING id`,
        [fee.toString(), net.toString(), now, now, t.id, r.type],
      );
      return row;
    };
    // A payment is nearly always seen before it is confirmed: its pending row is there already.
    // Otherwise it is written (or found written by a concurrent receive) and the guard tried again.
    let row = await confirm();
    if (!row) {
      await this.receive(em, r);
      row = await confirm();
    }
    if (!row) return false;
    await this.deps.ledger.post(em, creditPostings({ coinId: t.coin_id, accountId: r.accountId, code: r.type, fee, net, refId: row.id }));
    return true;
  }

  /**
   * An incoming transfer reverted (reorganisation, or gone from the mempool): its pending row is
   * marked reverted; a credited one is taken back by an `adjustment` row and ledger entries that
   * reverse the credit. Whether this call changed anything.
   */
  async takeBack(em: EntityManager, r: Pick<Receipt, 'transfer' | 'type'>): Promise<boolean> {
    const [tx] = await rawQuery<TransactionRow>(
      em,
      `SELECT * FROM transactions WHERE chain_transfer_id = ${placeholder(em, 1)} AND type = ${placeholder(em, 2)} AND status <> 'reverted' AND reverses_id IS NULL`,
      [r.transfer.id, r.type],
    );
    if (!tx) return false;
    const at = this.deps.clock.now();
    const now = iso(at);
    if ((await updateRows(em, 'transactions', { status: 'reverted', updated_at: now }, { id: tx.id, status: tx.status })) !== 1) return false;
    if (tx.status !== 'confirmed') return true;
    const adjustmentId = newTimeOrderedId(at.getTime());
    const posted = await rawQuery<{ id: string }>(
      em,
      `SELECT id FROM ledger_entries WHERE ref_id = ${placeholder(em, 1)} AND kind = 'posted' AND reverses_id IS NULL ORDER BY seq`,
      [tx.id],
    );
    await this.deps.ledger.reverse(
      em,
      posted.map((e) => e.id),
      'adjustment',
      adjustmentId,
    );
    await insertRow(em, 'transactions', takeBackRow(tx, adjustmentId, now));
    return true;
  }

  /**
   * Reserves a withdrawal's money: its pending `withdrawal` row (one live row per withdrawal) and a
   * ledger hold per leg, refused with 409 `insufficient_funds` when the account's available balance
   * cannot cover them (the caller's transaction then writes nothing). The row, or null when the
   * withdrawal already has one.
   */
  async hold(em: EntityManager, h: Hold): Promise<TransactionRow | null> {
    const at = this.deps.clock.now();
    const now = iso(at);
    const row: TransactionRow = {
      // Time-ordered: a stream of payouts appends at the end of the primary key's index.
      id: newTimeOrderedId(at.getTime()),
      account_id: h.accountId,
      type: 'withdrawal',
      status: 'pending',
      coin_id: h.coinId,
      amount: h.amount.toString(),
      fee: null,
      net_amount: null,
      txid: null,
      chain_transfer_id: null,
      invoice_id: null,
      address_id: null,
      withdrawal_id: h.withdrawalId,
      reverses_id: null,
      refund_id: h.refundId ?? null,
      created_at: now,
      confirmed_at: null,
      updated_at: now,
    };
    if (!(await insertRowIfAbsent(em, 'transactions', row))) return null;
    await this.deps.ledger.holdAll(em, holdPostings(h, row.id), true);
    return row;
  }

  /**
   * A held withdrawal completed: its row confirmed, each hold posted (`posted` by leg code: what
   * was really taken, at most what was held; the rest returns to available). Whether this call
   * settled it.
   */
  async settle(em: EntityManager, transactionId: string, posted: ReadonlyMap<string, Amount> = new Map()): Promise<boolean> {
    const now = iso(this.deps.clock.now());
    if ((await updateRows(em, 'transactions', { status: 'confirmed', confirmed_at: now, updated_at: now }, { id: transactionId, status: 'pending' })) !== 1)
      return false;
    for (const pending of await this.holdsOf(em, transactionId)) await this.deps.ledger.postPending(em, pending.id, posted.get(pending.code));
    return true;
  }

  /** A held withdrawal that will not happen: its row reverted, every hold released. Whether this call voided it. */
  async void(em: EntityManager, transactionId: string): Promise<boolean> {
    const now = iso(this.deps.clock.now());
    if ((await updateRows(em, 'transactions', { status: 'reverted', updated_at: now }, { id: transactionId, status: 'pending' })) !== 1) return false;
    for (const pending of await this.holdsOf(em, transactionId)) await this.deps.ledger.voidPending(em, pending.id);
    return true;
  }

  /** An account's balance of a coin: `available`, and `hold` (what its running withdrawals reserved). */
  accountBalance(em: EntityManager, accountId: string, coinId: string): Promise<BookBalance> {
    return this.deps.ledger.balance(em, accountBook(accountId), coinId);
  }

  /**
   * A withdrawal whose hold was released (its payout failed) and whose transaction was mined after
   * all (PRODUCT §14): its row confirmed again (guarded: from reverted, once) and each leg it held
   * posted from the account's book as a settlement would (`posted` by leg code, at most what was
   * held), whatever the account's balance becomes. Whether this call charged it.
   */
  async recharge(em: EntityManager, withdrawalId: string, posted: ReadonlyMap<string, Amount> = new Map()): Promise<boolean> {
    const [tx] = await rawQuery<Pick<TransactionRow, 'id'>>(
      em,
      `SELECT id FROM transactions WHERE withdrawal_id = ${placeholder(em, 1)} AND type = 'withdrawal' AND status = 'reverted' AND reverses_id IS NULL ORDER BY created_at DESC LIMIT 1`,
      [withdrawalId],
    );
    if (!tx) return false;
    const now = iso(this.deps.clock.now());
    if ((await updateRows(em, 'transactions', { status: 'confirmed', confirmed_at: now, updated_at: now }, { id: tx.id, status: 'reverted' })) !== 1)
      return false;
    const held = await rawQuery<Pick<LedgerEntryRow, 'coin_id' | 'debit_book' | 'credit_book' | 'amount' | 'code'>>(
      em,
      `SELECT coin_id, debit_book, credit_book, amount, code FROM ledger_entries WHERE ref_id = ${placeholder(em, 1)} AND kind = 'pending' ORDER BY seq`,
      [tx.id],
    );
    await this.deps.ledger.post(em, rechargePostings(held, posted, tx.id));
    return true;
  }

  /**
   * The chain transaction paying a held withdrawal: its live row (pending, or confirmed once
   * settled) shows the txid, a replacement's or the mined one's when that changes. No money moves.
   */
  async trackWithdrawal(em: EntityManager, withdrawalId: string, txid: string): Promise<void> {
    const p = (i: number) => placeholder(em, i);
    await rawRun(
      em,
      `UPDATE transactions SET txid = ${p(1)}, updated_at = ${p(2)} WHERE withdrawal_id = ${p(3)} AND type = 'withdrawal' AND status <> 'reverted' AND reverses_id IS NULL`,
      [txid, iso(this.deps.clock.now()), withdrawalId],
    );
  }

  private holdsOf(em: EntityManager, transactionId: string): Promise<Array<{ id: string; code: string }>> {
    return rawQuery(em, `SELECT id, code FROM ledger_entries WHERE ref_id = ${placeholder(em, 1)} AND kind = 'pending' ORDER BY seq`, [transactionId]);
  }

  /**
   * What the chain took for a confirmed payout transaction (`fee`, in the chain's native coin),
   * moved from the operator's `network` book (where the withdrawals' network fees were charged) to
   * `external`, once per payout: guarded by the payout's `fee_booked`; when another candidate with
   * another fee confirms it after a reorganisation, only the difference is booked. Whether this
   * call booked anything.
   */
  async bookPayoutFee(em: EntityManager, p: { payoutId: string; coinId: string; fee: Amount }): Promise<boolean> {
    const [row] = await rawQuery<{ fee_booked: string | null }>(em, `SELECT fee_booked FROM chain_payouts WHERE id = ${placeholder(em, 1)}`, [p.payoutId]);
    if (!row) return false;
    const change = payoutFeeChange(row.fee_booked, p.fee);
    if (change.isZero()) return false;
    const guard = row.fee_booked === null ? 'fee_booked IS NULL' : `fee_booked = ${placeholder(em, 3)}`;
    const args = row.fee_booked === null ? [p.fee.toString(), p.payoutId] : [p.fee.toString(), p.payoutId, row.fee_booked];
    const [updated] = await returning<{ id: string }>(
      em,
      `UPDATE chain_payouts SET fee_booked = ${placeholder(em, 1)} WHERE id = ${placeholder(em, 2)} AND ${guard} RETURNING id`,
      args,
    );
    if (!updated) return false;
    await this.postNetworkChange(em, p.coinId, change, p.payoutId);
    return true;
  }

  /**
   * What one of the wallet's own EVM transactions (a sweep, a gas top-up, a payout) did to the
   * operator's `network` book (PRODUCT §8a), once, guarded by its `account_sends.booked_at`: native coin
   * that reached a wallet address from the gas station (`arrived`: the station's float is outside
   * the books, so it enters them here) and what the chain took from a wallet address (`fee`).
   * Whether this call booked it.
   */
  async bookOwnSend(em: EntityManager, s: { sendId: string; coinId: string; fee: Amount; arrived?: Amount; feeBaseUnits?: bigint }): Promise<boolean> {
    const now = iso(this.deps.clock.now());
    const p = (i: number) => placeholder(em, i);
    const [guard] =
      s.feeBaseUnits === undefined
        ? await returning<{ id: string }>(em, `UPDATE account_sends SET booked_at = ${p(1)} WHERE id = ${p(2)} AND booked_at IS NULL RETURNING id`, [
            now,
            s.sendId,
          ])
        : await returning<{ id: string }>(
            em,
            `UPDATE account_sends SET booked_at = ${p(1)}, fee_paid = ${p(2)} WHERE id = ${p(3)} AND booked_at IS NULL RETURNING id`,
            [now, s.feeBaseUnits.toString(), s.sendId],
          );
    if (!guard) return false;
    const movements = ownSendPostings(s, 'book');
    if (movements.length > 0) await this.deps.ledger.post(em, movements);
    return true;
  }

  /**
   * `bookOwnSend` taken back: the send's block left the chain after it was booked (a deep
   * reorganisation), so neither its fee nor its top-up happened as booked; it is booked again
   * if it is mined again. Whether this call took it back.
   */
  async unbookOwnSend(em: EntityManager, s: { sendId: string; coinId: string; fee: Amount; arrived?: Amount }): Promise<boolean> {
    const [guard] = await returning<{ id: string }>(
      em,
      `UPDATE account_sends SET booked_at = NULL WHERE id = ${placeholder(em, 1)} AND booked_at IS NOT NULL RETURNING id`,
      [s.sendId],
    );
    if (!guard) return false;
    const movements = ownSendPostings(s, 'unbook');
    if (movements.length > 0) await this.deps.ledger.post(em, movements);
    return true;
  }

  /**
   * A withdrawal whose transaction was mined and did not pay (reverted, cancelled, a token that
   * took a fee on transfer): its hold is released (the `fail` move), but the chain took its fee:
   * the merchant is charged `networkFee` in the withdrawn coin, and `left`, what of it left the
   * wallet all the same, by one `adjustment` row of the withdrawal (its unique live row is the
   * guard) and postings from the account's book to the network book and to `external`. Whether
   * this call charged it.
   */
  async chargeFailedPayout(em: EntityManager, withdrawalId: string, networkFee: Amount, left: Amount = Amount.zero()): Promise<boolean> {
    const [tx] = await rawQuery<TransactionRow>(
      em,
      `SELECT * FROM transactions WHERE withdrawal_id = ${placeholder(em, 1)} AND type = 'withdrawal' ORDER BY created_at DESC LIMIT 1`,
      [withdrawalId],
    );
    if (!tx) return false;
    const at = this.deps.clock.now();
    const charge = failedPayoutCharge(tx, { id: newTimeOrderedId(at.getTime()), now: iso(at), networkFee, left });
    if (!charge || !(await insertRowIfAbsent(em, 'transactions', charge.row))) return false;
    await this.deps.ledger.post(em, charge.postings);
    return true;
  }

  /**
   * A booked own EVM transaction mined again with another fee (a reorganisation took its block and
   * it was mined anew, at another base fee): the difference between what was booked (`was`, base
   * units) and what the chain took now goes to or from the network book, once per change (guarded
   * by the booked `fee_paid`). Whether this call booked it.
   */
  async rebookOwnSend(em: EntityManager, s: { sendId: string; coinId: string; decimals: number; was: bigint; now: bigint }): Promise<boolean> {
    if (s.was === s.now) return false;
    const p = (i: number) => placeholder(em, i);
    const [guard] = await returning<{ id: string }>(
      em,
      `UPDATE account_sends SET fee_paid = ${p(1)}, booked_at = ${p(2)} WHERE id = ${p(3)} AND fee_paid = ${p(4)} RETURNING id`,
      [s.now.toString(), iso(this.deps.clock.now()), s.sendId, s.was.toString()],
    );
    if (!guard) return false;
    await this.postNetworkChange(em, s.coinId, Amount.fromBaseUnits(s.now - s.was, s.decimals), s.sendId);
    return true;
  }

  /** What the chain took changed by `change` (more: out of the network book to external; less: back). */
  private async postNetworkChange(em: EntityManager, coinId: string, change: Amount, refId: string): Promise<void> {
    await this.deps.ledger.post(em, networkChangePostings(coinId, change, refId));
  }
}
