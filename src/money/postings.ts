import type { TransactionRow } from '../db/entities/money';
import { accountBook, EXTERNAL_BOOK, FEE_BOOK, NETWORK_BOOK, type Movement } from '../ledger/ledger';
import { Amount } from '../shared/amount';

/**
 * What each operation of the money owner (money-movement.ts) posts to the ledger, and the rows it
 * writes to take money back, as pure values: the owner runs its guard, then posts what these say.
 * A movement of zero is never posted (the ledger refuses it), so a free credit posts no fee and a
 * charge of nothing posts nothing.
 */

const ZERO = Amount.zero();
const negate = (s: string | null): string | null => (s === null ? null : ZERO.minus(Amount.of(s)).toString());

/** A confirmed incoming transfer (PRODUCT §6, §7): the net from the chain to the account's book, the platform fee to the fee book. */
export function creditPostings(c: { coinId: string; accountId: string; code: string; fee: Amount; net: Amount; refId: string }): Movement[] {
  const out: Movement[] = [];
  if (c.net.isPositive()) out.push({ coinId: c.coinId, debit: EXTERNAL_BOOK, credit: accountBook(c.accountId), amount: c.net, code: c.code, refId: c.refId });
  if (c.fee.isPositive()) out.push({ coinId: c.coinId, debit: EXTERNAL_BOOK, credit: FEE_BOOK, amount: c.fee, code: 'platform_fee', refId: c.refId });
  return out;
}

/**
 * The `adjustment` row that takes back a credited transfer a reorganisation reverted (PRODUCT §6):
 * the reverted row's amounts negated, confirmed at once, pointing at what it reverses.
 */
export function takeBackRow(tx: TransactionRow, id: string, now: string): TransactionRow {
  return {
    ...tx,
    id,
    type: 'adjustment',
    status: 'confirmed',
    amount: negate(tx.amount)!,
    fee: negate(tx.fee),
    net_amount: negate(tx.net_amount),
    reverses_id: tx.id,
    created_at: now,
    confirmed_at: now,
    updated_at: now,
  };
}

/** A withdrawal's holds (SPEC "Withdrawal": the whole `total_debit` moves from available to hold): one pending transfer from the account's book per leg. */
export function holdPostings(
  h: { accountId: string; coinId: string; legs: ReadonlyArray<{ book: string; amount: Amount; code: string }> },
  refId: string,
): Movement[] {
  return h.legs.map((leg) => ({ coinId: h.coinId, debit: accountBook(h.accountId), credit: leg.book, amount: leg.amount, code: leg.code, refId }));
}

/** What a settlement posts of a leg that reserved `reserved`: `take` when given and not above it, else all of it. */
export function postedOf(reserved: Amount, take: Amount | undefined): Amount {
  return take === undefined || take.gt(reserved) ? reserved : take;
}

/**
 * A released withdrawal mined after all (PRODUCT §14, reopened): each leg it held posted as a
 * settlement would have (`posted` by leg code, at most what was held), whatever the balance becomes.
 */
export function rechargePostings(
  held: ReadonlyArray<{ coin_id: string; debit_book: string; credit_book: string; amount: string; code: string }>,
  posted: ReadonlyMap<string, Amount>,
  refId: string,
): Movement[] {
  const out: Movement[] = [];
  for (const h of held) {
    const amount = postedOf(Amount.of(h.amount), posted.get(h.code));
    if (amount.isPositive()) out.push({ coinId: h.coin_id, debit: h.debit_book, credit: h.credit_book, amount, code: h.code, refId });
  }
  return out;
}

/**
 * What the chain took changed by `change` (PRODUCT §8a): more leaves the network book for the
 * chain (`external`), less comes back to it. Nothing when it did not change.
 */
export function networkChangePostings(coinId: string, change: Amount, refId: string): Movement[] {
  if (change.isZero()) return [];
  const more = change.isPositive();
  return [
    {
      coinId,
      debit: more ? NETWORK_BOOK : EXTERNAL_BOOK,
      credit: more ? EXTERNAL_BOOK : NETWORK_BOOK,
      amount: more ? change : ZERO.minus(change),
      code: 'network_cost',
      refId,
    },
  ];
}

/** A payout's fee booked before (`booked`, null when never) and the fee its confirmed candidate paid: the change to book. */
export function payoutFeeChange(booked: string | null, fee: Amount): Amount {
  return fee.minus(booked === null ? ZERO : Amount.of(booked));
}

/**
 * One of the wallet's own EVM transactions (a sweep, a gas top-up, a payout) booked (`book`) or
 * taken back after a deep reorganisation (`unbook`), PRODUCT §8a: native coin that reached a wallet
 * address from the gas station enters the books (`gas_topup`), what the chain took leaves the
 * network book (`network_cost`); taking back posts the same in the other direction.
 */
export function ownSendPostings(s: { sendId: string; coinId: string; fee: Amount; arrived?: Amount }, way: 'book' | 'unbook'): Movement[] {
  const out: Movement[] = [];
  const move = (from: string, to: string, amount: Amount, code: string) =>
    out.push({ coinId: s.coinId, debit: way === 'book' ? from : to, credit: way === 'book' ? to : from, amount, code, refId: s.sendId });
  if (s.arrived?.isPositive()) move(EXTERNAL_BOOK, NETWORK_BOOK, s.arrived, 'gas_topup');
  if (s.fee.isPositive()) move(NETWORK_BOOK, EXTERNAL_BOOK, s.fee, 'network_cost');
  return out;
}

/**
 * A withdrawal mined without paying (reverted, cancelled, a token taking a fee on transfer): the
 * `adjustment` row charging the account `networkFee` plus `left` (what left the wallet all the
 * same), null when that is nothing, and its postings: the fee to the network book, `left` to the
 * chain.
 */
export function failedPayoutCharge(
  tx: TransactionRow,
  c: { id: string; now: string; networkFee: Amount; left: Amount },
): { row: TransactionRow; postings: Movement[] } | null {
  const total = c.networkFee.plus(c.left);
  if (!total.isPositive()) return null;
  const charged = ZERO.minus(total).toString();
  const row: TransactionRow = {
    ...tx,
    id: c.id,
    type: 'adjustment',
    status: 'confirmed',
    amount: charged,
    fee: null,
    net_amount: charged,
    reverses_id: null,
    created_at: c.now,
    confirmed_at: c.now,
    updated_at: c.now,
  };
  const postings: Movement[] = [];
  if (c.networkFee.isPositive())
    postings.push({ coinId: tx.coin_id, debit: accountBook(tx.account_id), credit: NETWORK_BOOK, amount: c.networkFee, code: 'network_fee', refId: c.id });
  if (c.left.isPositive())
    postings.push({ coinId: tx.coin_id, debit: accountBook(tx.account_id), credit: EXTERNAL_BOOK, amount: c.left, code: 'withdrawal', refId: c.id });
  return { row, postings };
}
