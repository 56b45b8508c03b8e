/**
 * What the one owner of money movement posts (ARCHITECTURE "The money path, both ways"): credits
 * with their fee, holds, settlements, take-backs and what the chain took, as pure values.
 */
import test from 'ava';
import type { TransactionRow } from '../../../src/db/entities/money';
import type { Movement } from '../../../src/ledger/ledger';
import {
  creditPostings,
  failedPayoutCharge,
  holdPostings,
  networkChangePostings,
  ownSendPostings,
  payoutFeeChange,
  postedOf,
  rechargePostings,
  takeBackRow,
} from '../../../src/money/postings';
import { Amount } from '../../../src/shared/amount';

const a = (s: string) => Amount.of(s);
const shown = (ms: Movement[]) => ms.map((m) => `${m.debit} → ${m.credit} ${m.amount.toString()} ${m.code} (${m.refId})`);
const NOW = '2026-03-01T00:00:00.000Z';

const row = (over: Partial<TransactionRow> = {}): TransactionRow => ({
  id: 'tx1',
  account_id: 'acc',
  type: 'deposit',
  status: 'confirmed',
  coin_id: 'btc',
  amount: '1.5',
  fee: '0.015',
  net_amount: '1.485',
  txid: 'abc',
  chain_transfer_id: 'ct1',
  invoice_id: null,
  address_id: 'addr',
  withdrawal_id: null,
  reverses_id: null,
  created_at: '2026-02-01T00:00:00.000Z',
  confirmed_at: '2026-02-01T00:10:00.000Z',
  updated_at: '2026-02-01T00:10:00.000Z',
  ...over,
});

test("a confirmed transfer is credited to the merchant's book less the platform fee, which goes to the fee book (PRODUCT §6)", (t) => {
  t.deepEqual(shown(creditPostings({ coinId: 'btc', accountId: 'acc', code: 'invoice_payment', fee: a('0.015'), net: a('1.485'), refId: 'tx1' })), [
    'external → account:acc 1.485 invoice_payment (tx1)',
    'external → fees 0.015 platform_fee (tx1)',
  ]);
});

test('a credit without a platform fee posts no fee entry; a transfer eaten whole by the fee credits the merchant nothing', (t) => {
  t.deepEqual(shown(creditPostings({ coinId: 'btc', accountId: 'acc', code: 'deposit', fee: a('0'), net: a('2'), refId: 'r' })), [
    'external → account:acc 2 deposit (r)',
  ]);
  t.deepEqual(shown(creditPostings({ coinId: 'btc', accountId: 'acc', code: 'deposit', fee: a('0.00000001'), net: a('0'), refId: 'r' })), [
    'external → fees 0.00000001 platform_fee (r)',
  ]);
});

test('a reverted credit is taken back by a confirmed adjustment with every amount negated, pointing at what it reverses (PRODUCT §6)', (t) => {
  const back = takeBackRow(row(), 'adj1', NOW);
  t.like(back, {
    id: 'adj1',
    type: 'adjustment',
    status: 'confirmed',
    amount: '-1.5',
    fee: '-0.015',
    net_amount: '-1.485',
    reverses_id: 'tx1',
    account_id: 'acc',
    chain_transfer_id: 'ct1',
  });
  t.like(back, { created_at: NOW, confirmed_at: NOW, updated_at: NOW });
  t.like(takeBackRow(row({ fee: null, net_amount: null }), 'adj2', NOW), { fee: null, net_amount: null, amount: '-1.5' });
});

test('a withdrawal\'s whole total_debit moves from available to hold: one pending transfer from the account\'s book per leg (SPEC "Withdrawal")', (t) => {
  const legs = [
    { book: 'external', amount: a('1'), code: 'withdrawal' },
    { book: 'fees', amount: a('0.01'), code: 'platform_fee' },
    { book: 'network', amount: a('0.0002'), code: 'network_fee' },
  ];
  t.deepEqual(shown(holdPostings({ accountId: 'acc', coinId: 'btc', legs }, 'w-tx')), [
    'account:acc → external 1 withdrawal (w-tx)',
    'account:acc → fees 0.01 platform_fee (w-tx)',
    'account:acc → network 0.0002 network_fee (w-tx)',
  ]);
});

test('a settlement posts what was really taken, never more than the leg held (actual-fee mode returns the rest)', (t) => {
  t.is(postedOf(a('0.0002'), undefined).toString(), '0.0002');
  t.is(postedOf(a('0.0002'), a('0.00015')).toString(), '0.00015');
  t.is(postedOf(a('0.0002'), a('0.0003')).toString(), '0.0002');
});

test('a failed payout mined after all charges each held leg again as a settlement would, skipping what comes to nothing (PRODUCT §14)', (t) => {
  const held = [
    { coin_id: 'eth', debit_book: 'account:acc', credit_book: 'external', amount: '1', code: 'withdrawal' },
    { coin_id: 'eth', debit_book: 'account:acc', credit_book: 'network', amount: '0.002', code: 'network_fee' },
  ];
  t.deepEqual(shown(rechargePostings(held, new Map([['network_fee', a('0.0015')]]), 'w-tx')), [
    'account:acc → external 1 withdrawal (w-tx)',
    'account:acc → network 0.0015 network_fee (w-tx)',
  ]);
  t.deepEqual(shown(rechargePostings(held, new Map([['network_fee', a('0')]]), 'w-tx')), ['account:acc → external 1 withdrawal (w-tx)']);
});

test("what the chain took for a payout leaves the operator's network book; a smaller fee after a reorganisation comes back (PRODUCT §8a)", (t) => {
  t.deepEqual(shown(networkChangePostings('btc', a('0.0001'), 'p1')), ['network → external 0.0001 network_cost (p1)']);
  t.deepEqual(shown(networkChangePostings('btc', a('-0.00004'), 'p1')), ['external → network 0.00004 network_cost (p1)']);
  t.deepEqual(networkChangePostings('btc', a('0'), 'p1'), []);
});

test("a payout's fee is booked once: only the difference to what was booked before is booked again", (t) => {
  t.is(payoutFeeChange(null, a('0.0001')).toString(), '0.0001');
  t.is(payoutFeeChange('0.0001', a('0.00012')).toString(), '0.00002');
  t.is(payoutFeeChange('0.0001', a('0.0001')).toString(), '0');
});

test("the wallet's own EVM sends: a gas top-up enters the network book, the fee leaves it; a deep reorganisation posts both back (PRODUCT §8a)", (t) => {
  const send = { sendId: 's1', coinId: 'eth', fee: a('0.0003'), arrived: a('0.01') };
  t.deepEqual(shown(ownSendPostings(send, 'book')), ['external → network 0.01 gas_topup (s1)', 'network → external 0.0003 network_cost (s1)']);
  t.deepEqual(shown(ownSendPostings(send, 'unbook')), ['network → external 0.01 gas_topup (s1)', 'external → network 0.0003 network_cost (s1)']);
  t.deepEqual(shown(ownSendPostings({ sendId: 's2', coinId: 'eth', fee: a('0.0003') }, 'book')), ['network → external 0.0003 network_cost (s2)']);
  t.deepEqual(ownSendPostings({ sendId: 's3', coinId: 'eth', fee: a('0') }, 'book'), []);
});

test('a withdrawal mined without paying is charged its network fee, and what left the wallet all the same, by one adjustment', (t) => {
  const w = row({ id: 'w-tx', type: 'withdrawal', coin_id: 'usdt', amount: '10', fee: null, net_amount: null, chain_transfer_id: null, withdrawal_id: 'w1' });
  const charge = failedPayoutCharge(w, { id: 'adj', now: NOW, networkFee: a('0.5'), left: a('0.1') })!;
  t.like(charge.row, {
    id: 'adj',
    type: 'adjustment',
    status: 'confirmed',
    amount: '-0.6',
    net_amount: '-0.6',
    fee: null,
    reverses_id: null,
    withdrawal_id: 'w1',
    created_at: NOW,
  });
  t.deepEqual(shown(charge.postings), ['account:acc → network 0.5 network_fee (adj)', 'account:acc → external 0.1 withdrawal (adj)']);
  t.deepEqual(shown(failedPayoutCharge(w, { id: 'adj', now: NOW, networkFee: a('0.5'), left: a('0') })!.postings), [
    'account:acc → network 0.5 network_fee (adj)',
  ]);
  t.is(failedPayoutCharge(w, { id: 'adj', now: NOW, networkFee: a('0'), left: a('0') }), null, 'nothing to charge: no row');
});
