/**
 * Refunds as a merchant and a payer see them (issue 33, PRODUCT §16), on bcoin regtest through the
 * signed API: the excess of an overpaid invoice and part of a payment sent back with the
 * destination paid exactly (fees on top, or out of the amount when the payer pays them); refusals
 * that hold nothing; refund_id idempotency and parallel copies; the payer link (address given,
 * used once, expired); cancels; an underpaid invoice accepted; a static-address deposit refunded;
 * the whitelist not applied to a refund; the ledger and reconcile clean after all of it. One
 * daemon and one node for the file, its tests in turn.
 */
import test from 'ava';
import { Transaction } from 'bitcoinjs-lib';
import { EventEntity } from '../../../src/db/entities/events';
import { RefundEntity } from '../../../src/db/entities/refund';
import { AccountEntity } from '../../../src/db/entities/team';
import { Amount } from '../../../src/shared/amount';
import { killAllBcoins, sats } from '../../helpers/bcoin';
import { BTC, CONFIRMATIONS, elsewhere, paid, reconcile, startPayoutFixture, until, type PayoutFixture } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

let f: PayoutFixture;
test.before(async () => {
  f = await startPayoutFixture();
});
test.after.always(async () => {
  await f?.stop();
});

const refunds = () => f.td.daemon.refunds.service;

async function paidInvoice(amount: string, pay: string): Promise<any> {
  const inv = await f.api.post('/v1/invoices', { amount, currency: 'BTC', coin_id: BTC });
  if (inv.status !== 201) throw new Error(`invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
  await f.node.pay([{ address: inv.body.address, value: sats(pay) }]);
  await f.node.mine(CONFIRMATIONS);
  let last: any;
  await until(
    async () => ['paid', 'underpaid'].includes((last = (await f.api.get(`/v1/invoices/${inv.body.id}`)).body).status) && last.paid_amount === pay,
    () => `the invoice paid: ${JSON.stringify(last)}`,
  );
  return last;
}

async function getRefund(id: string): Promise<any> {
  const res = await f.api.get(`/v1/refunds/${id}`);
  if (res.status !== 200) throw new Error(`GET refund: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Mines until the refund's payout is in the mempool, reads what it pays `to`, then mines it to completion. */
async function completes(refundId: string, to: string): Promise<{ refund: any; paidTo: bigint }> {
  let r: any;
  await until(
    async () => (r = await getRefund(refundId)).txid !== null,
    () => `the refund broadcast: ${JSON.stringify(r)}`,
  );
  await until(async () => (await f.node.mempool()).includes(r.txid), 'the refund in the mempool');
  const tx = Transaction.fromHex(await f.node.rpc.call<string>('getrawtransaction', [r.txid, false]));
  await f.mineUntil(async () => (r = await getRefund(refundId)).status === 'completed', 'the refund completed');
  return { refund: r, paidTo: paid(f, tx, to) };
}

async function eventsOf(objectId: string): Promise<string[]> {
  const rows = await f.td.daemon.store.read.find(EventEntity, { where: { object_id: objectId }, order: { seq: 'ASC' } });
  return rows.map((r) => r.type);
}

const tokenOf = (url: string): string => url.split('/').pop()!;

test.serial(
  'the excess of an overpaid invoice goes back to the payer exactly; the invoice and its payment show it refunded; the ledger shows a withdrawal linked to the refund',
  async (t) => {
    const inv = await paidInvoice('0.1', '0.15');
    t.is(inv.overpaid_amount, '0.05');
    const to = elsewhere();
    const res = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: 'excess', to_address: to, refund_id: 'excess-1' });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.like(res.body, { amount: '0.05', invoice_id: inv.id, to_address: to, refund_id: 'excess-1', network_fee_paid_by: 'merchant', refund_url: null });
    t.truthy(res.body.withdrawal_id);
    const { refund, paidTo } = await completes(res.body.id, to);
    t.is(paidTo, sats('0.05'), 'the payer gets the excess exactly');
    t.like(refund, { status: 'completed', failure_reason: null });
    const w = await f.get(refund.withdrawal_id);
    t.like(w, { status: 'completed', amount: '0.05', to_address: to });

    t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0.05');
    const payment = (await f.api.get(`/v1/transactions?invoice_id=${inv.id}`)).body.items.find((x: any) => x.type === 'invoice_payment');
    t.is(payment.refunded_amount, '0', 'refunded against the invoice, not one payment');
    const out = (await f.api.get('/v1/transactions?type=withdrawal')).body.items.find((x: any) => x.withdrawal_id === w.id);
    t.like(out, { refund_id: refund.id, status: 'confirmed', amount: '0.05' });
    t.deepEqual(await eventsOf(refund.id), ['refund.created', 'refund.completed']);

    // Nothing more than the excess: the excess is spent.
    const again = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: 'excess', to_address: elsewhere() });
    t.is(again.status, 409);
    t.like(again.body.error, { code: 'conflict', details: { reason: 'refund_exceeds_received' } });
  },
);

test.serial(
  'a refund of one payment with the network fee paid by the payer sends the amount less the reserved fee; the payment and its invoice show it',
  async (t) => {
    const inv = await paidInvoice('0.2', '0.2');
    const payment = (await f.api.get(`/v1/transactions?invoice_id=${inv.id}`)).body.items.find((x: any) => x.type === 'invoice_payment');
    const to = elsewhere();
    const res = await f.api.post('/v1/refunds', { transaction_id: payment.id, amount: '0.03', to_address: to, network_fee_paid_by: 'payer' });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.like(res.body, { amount: '0.03', transaction_id: payment.id, invoice_id: inv.id, network_fee_paid_by: 'payer' });
    const w = await f.get(res.body.withdrawal_id);
    t.is(Amount.of(w.amount).plus(Amount.of(w.network_fee_reserved)).toString(), '0.03', 'the fee comes out of the amount');
    const { paidTo } = await completes(res.body.id, to);
    t.is(paidTo, Amount.of(w.amount).toBaseUnits(8));
    t.is((await f.api.get(`/v1/transactions/${payment.id}`)).body.refunded_amount, '0.03');
    t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0.03');
  },
);

test.serial(
  'refusals answer with the envelope and hold nothing: more than received, nothing received, unknown or foreign invoice, bad amount, bad or own address',
  async (t) => {
    const inv = await paidInvoice('0.05', '0.05');
    const unpaid = (await f.api.post('/v1/invoices', { amount: '0.01', currency: 'BTC', coin_id: BTC })).body;
    const other = await f.anotherMerchant();
    const foreign = (await other.api.post('/v1/invoices', { amount: '0.01', currency: 'BTC', coin_id: BTC })).body;
    const before = await f.balance();
    const count = async () => f.td.daemon.store.read.count(RefundEntity);
    const rows = await count();
    const cases: Array<[Record<string, unknown>, number, string, Record<string, unknown>?]> = [
      [{ invoice_id: inv.id, amount: '0.05000001', to_address: elsewhere() }, 409, 'conflict', { reason: 'refund_exceeds_received', refundable: '0.05' }],
      [{ invoice_id: inv.id, amount: 'excess', to_address: elsewhere() }, 409, 'conflict', { reason: 'refund_exceeds_received' }],
      [{ invoice_id: unpaid.id, amount: 'all', to_address: elsewhere() }, 409, 'conflict', { reason: 'refund_exceeds_received', refundable: '0' }],
      [{ invoice_id: foreign.id, amount: '0.01', to_address: elsewhere() }, 404, 'not_found'],
      [{ invoice_id: '00000000-0000-4000-8000-000000000000', amount: '0.01', to_address: elsewhere() }, 404, 'not_found'],
      [{ invoice_id: inv.id, amount: '0.000000001', to_address: elsewhere() }, 400, 'validation_error', { field: 'amount' }],
      [{ invoice_id: inv.id, amount: '-1', to_address: elsewhere() }, 400, 'validation_error', { field: 'amount' }],
      [{ amount: '0.01', to_address: elsewhere() }, 400, 'validation_error', { field: 'invoice_id' }],
      [{ invoice_id: inv.id, amount: '0.01', to_address: 'bc1qnotanaddress' }, 422, 'address_refused'],
      [{ invoice_id: inv.id, amount: '0.01', to_address: inv.address }, 422, 'address_refused'],
      [{ invoice_id: inv.id, amount: '0.01', network_fee_paid_by: 'nobody' }, 400, 'validation_error', { field: 'network_fee_paid_by' }],
    ];
    for (const [body, status, code, details] of cases) {
      const res = await f.api.post('/v1/refunds', body);
      t.is(res.status, status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      t.is(res.body.error?.code, code);
      if (details) t.like(res.body.error.details, details);
    }
    t.deepEqual(await f.balance(), before, 'nothing held');
    t.is(await count(), rows, 'no refund written');
    t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0');
    t.is((await other.api.get('/v1/refunds')).body.items.length, 0);
  },
);

test.serial('refund_id: the same values return the same refund (200), others are 409; 20 parallel copies make one refund and one hold', async (t) => {
  const inv = await paidInvoice('0.04', '0.04');
  const to = elsewhere();
  const body = { invoice_id: inv.id, amount: '0.01', to_address: to, refund_id: 'same-1' };
  const first = await f.api.post('/v1/refunds', body);
  t.is(first.status, 201);
  const repeat = await f.api.post('/v1/refunds', { ...body, amount: '0.010' });
  t.is(repeat.status, 200);
  t.is(repeat.body.id, first.body.id);
  const changed = await f.api.post('/v1/refunds', { ...body, amount: '0.02' });
  t.is(changed.status, 409);
  t.like(changed.body.error.details, { reason: 'refund_id_mismatch', refund: first.body.id });

  // An Idempotency-Key replays the first answer and creates nothing twice; another body under it is refused.
  const keyed = { invoice_id: inv.id, amount: '0.001', to_address: elsewhere() };
  const k1 = await f.api.call('POST', '/v1/refunds', keyed, { 'Idempotency-Key': 'refund-key-1' });
  t.is(k1.status, 201);
  const k2 = await f.api.call('POST', '/v1/refunds', keyed, { 'Idempotency-Key': 'refund-key-1' });
  t.is(k2.headers.get('idempotent-replayed'), 'true');
  t.is(k2.body.id, k1.body.id);
  const k3 = await f.api.call('POST', '/v1/refunds', { ...keyed, amount: '0.002' }, { 'Idempotency-Key': 'refund-key-1' });
  t.is(k3.status, 422);
  t.is(k3.body.error.code, 'idempotency.mismatch');

  const parallel = { invoice_id: inv.id, amount: '0.02', to_address: elsewhere(), refund_id: 'parallel-1' };
  const answers = await Promise.all(Array.from({ length: 20 }, () => f.api.post('/v1/refunds', parallel)));
  t.true(
    answers.every((a) => a.status === 201 || a.status === 200),
    JSON.stringify(answers.map((a) => [a.status, a.body.error?.code])),
  );
  t.is(answers.filter((a) => a.status === 201).length, 1);
  t.is(new Set(answers.map((a) => a.body.id)).size, 1);
  t.is((await f.api.get(`/v1/refunds?invoice_id=${inv.id}`)).body.items.length, 3);
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0.031');
  const listed = await f.api.get('/v1/refunds?refund_id=parallel-1');
  t.deepEqual(
    listed.body.items.map((r: any) => r.id),
    [answers[0]!.body.id],
  );
  for (const id of [first.body.id, k1.body.id, answers[0]!.body.id]) await f.mineUntil(async () => (await getRefund(id)).status === 'completed', 'completed');
});

test.serial(
  'without an address the refund waits for the payer: a link, a hold; the address given once through it starts the payout, which completes',
  async (t) => {
    const inv = await paidInvoice('0.03', '0.03');
    const holdBefore = Amount.of((await f.balance()).hold);
    const res = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: 'all' });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.like(res.body, { status: 'awaiting_address', amount: '0.03', to_address: null, withdrawal_id: null });
    t.regex(res.body.refund_url, new RegExp(`/pay/${inv.id}/refund/[A-Za-z0-9_-]{43}$`));
    t.truthy(res.body.expires_at);
    t.true(Amount.of((await f.balance()).hold).gt(holdBefore.plus(Amount.of('0.03')).minus(Amount.of('0.00000001'))), 'held');
    t.is((await getRefund(res.body.id)).refund_url, res.body.refund_url, 'the merchant reads the link again');
    const token = tokenOf(res.body.refund_url);

    t.is(await refunds().pageView(inv.id, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')), null, 'another token finds nothing');
    t.is(await refunds().pageView('00000000-0000-4000-8000-000000000000', token), null, 'another path finds nothing');
    const page = await refunds().pageView(inv.id, token);
    t.like(page, { status: 'awaiting_address', amount: '0.03', ticker: 'BTC', to_address: null });
    t.false(JSON.stringify(page).includes(inv.id), 'no internal id on the payer page');

    await t.throwsAsync(refunds().checkAddress(inv.id, token, 'not-an-address'), { message: /not accepted/ });
    await t.throwsAsync(refunds().checkAddress(inv.id, token, inv.address), { message: /not accepted/ });
    const to = elsewhere();
    t.like(await refunds().checkAddress(inv.id, token, to), { to_address: to });
    t.is((await getRefund(res.body.id)).status, 'awaiting_address', 'checking does not give it');
    const given = await refunds().provideAddress(inv.id, token, to);
    t.like(given, { to_address: to });
    await t.throwsAsync(refunds().provideAddress(inv.id, token, elsewhere()), { message: /has its address already/ });
    const { refund, paidTo } = await completes(res.body.id, to);
    t.is(paidTo, sats('0.03'));
    t.like(refund, { to_address: to, status: 'completed' });
    t.deepEqual(await eventsOf(refund.id), ['refund.created', 'refund.address_provided', 'refund.completed']);
    t.like(await refunds().pageView(inv.id, token), { status: 'completed', txid: refund.txid });
  },
);

test.serial(
  'an unused link expires: the hold is released, the amount refundable again, the link refuses an address; a waiting refund and a pending one are cancelled',
  async (t) => {
    const inv = await paidInvoice('0.02', '0.02');
    const before = await f.balance();
    const res = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: '0.01' });
    t.is(res.status, 201);
    t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0.01');
    await f.td.daemon.store.write((em) => em.update(RefundEntity, { id: res.body.id }, { expires_at: new Date(Date.now() - 1000).toISOString() }));
    t.is(await refunds().expireDue(), 1);
    t.like(await getRefund(res.body.id), { status: 'expired' });
    t.deepEqual(await f.balance(), before, 'hold released');
    t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0');
    await t.throwsAsync(refunds().provideAddress(inv.id, tokenOf(res.body.refund_url), elsewhere()), { message: /has its address already|expired/ });
    t.deepEqual(await eventsOf(res.body.id), ['refund.created', 'refund.expired']);

    // A link past its time before the job ran: the payer's address expires that refund, and only it.
    const late = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: '0.005' });
    const beside = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: '0.005' });
    await f.td.daemon.store.write((em) => em.update(RefundEntity, { id: late.body.id }, { expires_at: new Date(Date.now() - 1000).toISOString() }));
    await f.td.daemon.store.write((em) => em.update(RefundEntity, { id: beside.body.id }, { expires_at: new Date(Date.now() - 1000).toISOString() }));
    await t.throwsAsync(refunds().provideAddress(inv.id, tokenOf(late.body.refund_url), elsewhere()), { message: /expired/ });
    t.like(await getRefund(late.body.id), { status: 'expired', withdrawal_id: null });
    t.is((await getRefund(beside.body.id)).status, 'awaiting_address', 'no other refund expired by a public caller');
    t.is(await refunds().expireDue(), 1);
    t.deepEqual(await f.balance(), before, 'both holds released');

    const waiting = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: '0.01' });
    const cancelled = await f.api.post(`/v1/refunds/${waiting.body.id}/cancel`, {});
    t.is(cancelled.status, 200);
    t.is(cancelled.body.status, 'cancelled');
    t.deepEqual(await f.balance(), before);
    const twice = await f.api.post(`/v1/refunds/${waiting.body.id}/cancel`, {});
    t.is(twice.status, 409);
    t.is(twice.body.error.code, 'conflict');
    t.is((await f.api.get('/v1/refunds/00000000-0000-4000-8000-000000000000')).status, 404);
    // Another merchant neither reads nor cancels it, nor refunds this merchant's payment.
    const other = await f.anotherMerchant();
    const open = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: '0.01' });
    t.is((await other.api.get(`/v1/refunds/${open.body.id}`)).status, 404);
    const foreignCancel = await other.api.post(`/v1/refunds/${open.body.id}/cancel`, {});
    t.is(foreignCancel.status, 404);
    t.is(foreignCancel.body.error.code, 'not_found');
    t.is((await getRefund(open.body.id)).status, 'awaiting_address');
    const payment = (await f.api.get(`/v1/transactions?invoice_id=${inv.id}`)).body.items.find((x: any) => x.type === 'invoice_payment');
    t.is((await other.api.post('/v1/refunds', { transaction_id: payment.id, amount: '0.01', to_address: elsewhere() })).status, 404);
    t.is((await f.api.post(`/v1/refunds/${open.body.id}/cancel`, {})).status, 200);
  },
);

test.serial('an underpaid invoice accepted is paid with resolution accepted_underpayment, invoice.paid sent, nothing credited again; once', async (t) => {
  const inv = await paidInvoice('0.1', '0.06');
  t.is(inv.status, 'underpaid');
  const before = await f.balance();
  const res = await f.api.post(`/v1/invoices/${inv.id}/accept`, {});
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'paid', resolution: 'accepted_underpayment', paid_amount: '0.06', remaining_amount: '0' });
  t.deepEqual(await f.balance(), before, 'nothing credited again');
  t.true((await eventsOf(inv.id)).includes('invoice.paid'));
  const again = await f.api.post(`/v1/invoices/${inv.id}/accept`, {});
  t.is(again.status, 409);
  t.like(again.body.error.details, { reason: 'invoice_not_underpaid', status: 'paid' });
  const fresh = (await f.api.post('/v1/invoices', { amount: '0.01', currency: 'BTC', coin_id: BTC })).body;
  const refused = await f.api.post(`/v1/invoices/${fresh.id}/accept`, {});
  t.is(refused.status, 409);
  t.like(refused.body.error.details, { reason: 'invoice_not_underpaid', status: 'new' });
  t.is((await f.api.get(`/v1/invoices/${fresh.id}`)).body.resolution, null);
});

test.serial(
  "a static address's deposit is refunded by its transaction; an enforced whitelist does not hold a refund; a large one waits for a second approval",
  async (t) => {
    const addr = await f.api.post('/v1/addresses', { customer_id: 'refund-customer', coin_id: BTC });
    t.is(addr.status, 201, JSON.stringify(addr.body));
    await f.node.pay([{ address: addr.body.address, value: sats('0.02') }]);
    await f.node.mine(CONFIRMATIONS);
    let deposit: any;
    await until(async () => {
      deposit = (await f.api.get(`/v1/transactions?type=deposit&status=confirmed`)).body.items[0];
      return deposit !== undefined;
    }, 'the deposit confirmed');
    await f.td.daemon.store.write((em) => em.update(AccountEntity, { id: f.accountId }, { withdrawal_whitelist_enforced: true }));
    const to = elsewhere();
    const res = await f.api.post('/v1/refunds', { transaction_id: deposit.id, amount: 'all', to_address: to });
    t.is(res.status, 201, JSON.stringify(res.body));
    t.like(res.body, { transaction_id: deposit.id, invoice_id: null, amount: deposit.amount });
    const { paidTo } = await completes(res.body.id, to);
    t.is(paidTo, Amount.of(deposit.amount).toBaseUnits(8), 'paid although the address is on no whitelist');
    t.is((await f.api.get(`/v1/transactions/${deposit.id}`)).body.refunded_amount, deposit.amount);
    await f.td.daemon.store.write((em) =>
      em.update(AccountEntity, { id: f.accountId }, { withdrawal_whitelist_enforced: false, dual_approval_threshold: '1' }),
    );

    const inv = await paidInvoice('0.05', '0.05');
    const big = await f.api.post('/v1/refunds', { invoice_id: inv.id, amount: '0.05', to_address: elsewhere() });
    t.is(big.status, 201);
    t.is(big.body.status, 'awaiting_approval', 'above the dual-approval threshold');
    const cancelled = await f.api.post(`/v1/refunds/${big.body.id}/cancel`, {});
    t.like(cancelled.body, { status: 'cancelled' });
    t.like(await f.get(big.body.withdrawal_id), { status: 'cancelled' });
    t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.refunded_amount, '0');
    t.deepEqual(await eventsOf(big.body.id), ['refund.created', 'refund.cancelled']);
    await f.td.daemon.store.write((em) => em.update(AccountEntity, { id: f.accountId }, { dual_approval_threshold: null }));
  },
);

test.serial('after every refund the ledger verifies and reconcile finds the books equal to the chain', async (t) => {
  t.true(await f.ledgerClean());
  const r = await reconcile(f);
  t.is(r.code, 0, r.report + r.stderr);
});
