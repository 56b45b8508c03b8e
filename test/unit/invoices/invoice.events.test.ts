/**
 * The events an invoice recomputation sends (SPEC "States and transitions: Invoice", PRODUCT §10):
 * each status its event, a reorganisation `invoice.reverted`, late funds `invoice.late_payment`.
 */
import test from 'ava';
import type { ChainTransferRow, TransferStatus } from '../../../src/db/entities/chain';
import type { InvoiceRow, InvoiceStatus } from '../../../src/db/entities/money';
import { invoiceEvents, stateChanged, type RecomputeCause } from '../../../src/invoices/invoice.events';
import type { InvoiceState } from '../../../src/invoices/invoice.state';

const TTL = '2026-03-01T00:30:00.000Z';
const row = (status: InvoiceStatus, over: Partial<InvoiceRow> = {}): InvoiceRow =>
  ({
    id: 'i1',
    status,
    coin_id: 'btc',
    payer_amount: '1',
    tolerance_percent: '0',
    ttl_expires_at: TTL,
    cancelled_at: null,
    paid_amount: '0',
    remaining_amount: '1',
    overpaid_amount: '0',
    late_payment: false,
    expired_at: null,
    ...over,
  }) as InvoiceRow;
const cause = (status: TransferStatus, previous: TransferStatus | null, over: Partial<ChainTransferRow> = {}): RecomputeCause => ({
  transfer: { status, coin_id: 'btc', seen_at: '2026-03-01T00:10:00.000Z', amount: '1', txid: 'abc', ...over } as ChainTransferRow,
  previous,
});

test('each status an invoice reaches sends its event: pending, paid, underpaid, expired', (t) => {
  t.deepEqual(invoiceEvents(row('new'), row('pending'), cause('seen', null)), ['invoice.pending']);
  t.deepEqual(invoiceEvents(row('pending'), row('paid'), cause('confirmed', 'seen')), ['invoice.paid']);
  t.deepEqual(invoiceEvents(row('pending'), row('underpaid'), cause('confirmed', 'seen')), ['invoice.underpaid']);
  t.deepEqual(invoiceEvents(row('new'), row('expired'), null), ['invoice.expired']);
});

test('a recomputation that leaves the status where it was sends nothing', (t) => {
  t.deepEqual(invoiceEvents(row('pending'), row('pending'), cause('seen', null)), []);
  t.deepEqual(invoiceEvents(row('new'), row('new'), null), []);
});

test('a reorganisation that reverts a confirmed transfer sends invoice.reverted, whatever the status becomes', (t) => {
  t.deepEqual(invoiceEvents(row('paid'), row('new'), cause('reverted', 'confirmed')), ['invoice.reverted']);
  t.deepEqual(invoiceEvents(row('paid'), row('paid'), cause('reverted', 'confirmed')), ['invoice.reverted'], 'enough remains: still paid, still told');
  t.deepEqual(
    invoiceEvents(row('pending'), row('new'), cause('reverted', 'seen')),
    ['invoice.reverted'],
    'a dropped unconfirmed transfer that moved the status',
  );
  t.deepEqual(invoiceEvents(row('pending'), row('pending'), cause('reverted', 'seen')), [], 'one of several waiting transfers dropped: nothing shown changed');
});

test('funds confirmed after the TTL on an expired invoice send invoice.late_payment (SPEC: late funds)', (t) => {
  const late = cause('confirmed', 'seen', { seen_at: '2026-03-01T00:40:00.000Z' });
  t.deepEqual(invoiceEvents(row('expired'), row('expired', { late_payment: true }), late), ['invoice.late_payment']);
});

test('late funds of another coin, or an in-time confirmation, send no invoice.late_payment', (t) => {
  t.deepEqual(
    invoiceEvents(row('expired'), row('expired', { late_payment: true }), cause('confirmed', 'seen', { seen_at: '2026-03-01T00:40:00.000Z', coin_id: 'usdt' })),
    [],
  );
  t.deepEqual(invoiceEvents(row('underpaid'), row('underpaid', { late_payment: true }), cause('confirmed', 'seen')), []);
});

const state = (over: Partial<InvoiceState> = {}): InvoiceState => ({
  status: 'new',
  paid_amount: '0',
  remaining_amount: '1',
  overpaid_amount: '0',
  late_payment: false,
  expired_at: null,
  ...over,
});

test('an invoice is written again only when something it shows changed', (t) => {
  t.false(stateChanged(row('new'), state()));
  t.false(stateChanged(row('new', { late_payment: 0 as unknown as boolean }), state()), "SQLite's 0 is false");
  for (const over of [
    { status: 'pending' as const },
    { paid_amount: '0.5' },
    { remaining_amount: '0.5' },
    { overpaid_amount: '0.1' },
    { late_payment: true },
    { expired_at: TTL },
  ]) {
    t.true(stateChanged(row('new'), state(over)), JSON.stringify(over));
  }
});
