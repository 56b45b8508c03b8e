import test from 'ava';
import { TransactionEntity } from '../../../src/db/entities/money';
import { accountBook, FEE_BOOK } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { FakeClock } from '../../../src/shared/clock';
import { COINS, startInvoiceFixture, type InvoiceFixture } from '../../helpers/invoice-fixture';

const balanceOf = async (f: InvoiceFixture, book: string, coinId: string) => {
  const b = await f.td.daemon.ledger.balance(f.td.daemon.store.read, book, coinId);
  return { available: b.available.toString(), hold: b.hold.toString() };
};

const ledgerClean = async (f: InvoiceFixture) => {
  const report = await verifyLedger(f.td.daemon.store.read);
  return report.ok;
};

const createEthInvoice = async (f: InvoiceFixture, amount = '1.5', extra: Record<string, unknown> = {}) => {
  const res = await f.api.post('/v1/invoices', { amount, currency: 'ETH', coin_id: COINS.ETH, ...extra });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

test('an exact payment: pending when seen, paid and credited less the platform fee when confirmed', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const inv = await createEthInvoice(f, '2');
  t.is(inv.status, 'new');
  t.is(inv.payer_amount, '2');
  const eth = f.chain('ethereum');

  const transfer = await eth.send(inv.address, COINS.ETH, '2');
  let got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'pending');
  t.is(got.paid_amount, '0');
  t.deepEqual((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '0');

  await eth.confirm(transfer);
  got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'paid');
  t.is(got.paid_amount, '2');
  t.is(got.remaining_amount, '0');
  t.is(got.overpaid_amount, '0');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '1.98');
  t.is((await balanceOf(f, FEE_BOOK, COINS.ETH)).available, '0.02');

  const txs = await f.td.daemon.store.read.find(TransactionEntity, { where: { invoice_id: inv.id } });
  t.is(txs.length, 1);
  t.like(txs[0], { type: 'invoice_payment', status: 'confirmed', amount: '2', fee: '0.02', net_amount: '1.98', txid: transfer.txid });

  const events = await f.events();
  t.deepEqual(
    events.map((e) => e.type),
    ['invoice.pending', 'invoice.paid'],
  );
  t.deepEqual(events[1]!.data.invoice, got);
  t.deepEqual(events[1]!.data.details, { amount: '2', chain_transaction_id: transfer.txid });
  t.is(events[1]!.object_id, inv.id);
  t.true(await ledgerClean(f));
});

test('fee paid by the payer: payer_amount carries the fee and the merchant keeps amount_crypto', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1.5' });
  const inv = await createEthInvoice(f, '1', { fee_paid_by: 'payer' });
  t.is(inv.amount_crypto, '1');
  t.is(inv.payer_amount, '1.015');
  t.is(inv.fee_paid_by, 'payer');
  await f.chain('ethereum').pay(inv.address, COINS.ETH, '1.015');
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'paid');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '1');
  t.is((await balanceOf(f, FEE_BOOK, COINS.ETH)).available, '0.015');
  t.true(await ledgerClean(f));
});

test('underpaid, then a top-up before the TTL pays the invoice; both transfers are credited', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const inv = await createEthInvoice(f, '1.5');
  const eth = f.chain('ethereum');
  await eth.pay(inv.address, COINS.ETH, '1');
  let got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'underpaid');
  t.is(got.remaining_amount, '0.5');
  t.is(got.paid_amount, '1');
  await eth.pay(inv.address, COINS.ETH, '0.5');
  got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'paid');
  t.is(got.paid_amount, '1.5');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '1.5');
  t.deepEqual(
    (await f.events()).map((e) => e.type),
    ['invoice.pending', 'invoice.underpaid', 'invoice.pending', 'invoice.paid'],
  );
  t.true(await ledgerClean(f));
});

test('within the underpayment tolerance a short payment is paid', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ underpayment_tolerance_percent: '2' });
  const inv = await createEthInvoice(f, '1');
  await f.chain('ethereum').pay(inv.address, COINS.ETH, '0.98');
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'paid');
  t.is(got.paid_amount, '0.98');
});

test('an overpayment stays paid with overpaid_amount, and invoice.paid carries it', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const inv = await createEthInvoice(f, '1.5');
  await f.chain('ethereum').pay(inv.address, COINS.ETH, '2.25');
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'paid');
  t.is(got.overpaid_amount, '0.75');
  const [paid] = await f.events('invoice.paid');
  t.is(paid!.data.invoice.overpaid_amount, '0.75');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '2.25');
});

test('two transfers confirmed together pay the invoice', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const inv = await createEthInvoice(f, '1');
  const eth = f.chain('ethereum');
  const a = await eth.send(inv.address, COINS.ETH, '0.4');
  const b = await eth.send(inv.address, COINS.ETH, '0.6');
  await eth.confirm(a);
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'pending');
  await eth.confirm(b);
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'paid');
  t.is(got.paid_amount, '1');
  t.is(await f.td.daemon.store.read.count(TransactionEntity, { where: { invoice_id: inv.id } }), 2);
  t.true(await ledgerClean(f));
});

test('a reverted credited transfer posts an adjustment, recomputes the invoice and sends invoice.reverted', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const inv = await createEthInvoice(f, '1');
  const eth = f.chain('ethereum');
  const transfer = await eth.pay(inv.address, COINS.ETH, '1');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'paid');
  await eth.revert(transfer);

  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'new');
  t.is(got.paid_amount, '0');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '0');
  t.is((await balanceOf(f, FEE_BOOK, COINS.ETH)).available, '0');
  const txs = await f.td.daemon.store.read.find(TransactionEntity, { where: { invoice_id: inv.id }, order: { created_at: 'ASC' } });
  const payment = txs.find((x) => x.type === 'invoice_payment')!;
  const adjustment = txs.find((x) => x.type === 'adjustment')!;
  t.is(payment.status, 'reverted');
  t.like(adjustment, { status: 'confirmed', amount: '-1', fee: '-0.01', net_amount: '-0.99', reverses_id: payment.id, txid: transfer.txid });
  const reverted = await f.events('invoice.reverted');
  t.is(reverted.length, 1);
  t.is(reverted[0]!.data.invoice.status, 'new');
  t.true(await ledgerClean(f));

  // Included again by the new branch: credited again, paid again.
  await eth.confirm(transfer);
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'paid');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '0.99');
  t.true(await ledgerClean(f));
});

test('a revert that leaves too little makes a paid invoice underpaid', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const inv = await createEthInvoice(f, '1');
  const eth = f.chain('ethereum');
  await eth.pay(inv.address, COINS.ETH, '0.5');
  const second = await eth.pay(inv.address, COINS.ETH, '0.5');
  await eth.revert(second);
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.is(got.status, 'underpaid');
  t.is(got.remaining_amount, '0.5');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '0.5');
});

test('late payments on expired and cancelled invoices: same status, credited, late_payment and invoice.late_payment', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startInvoiceFixture({ clock });
  t.teardown(() => f.stop());
  const expiring = await createEthInvoice(f, '1');
  const cancelled = await createEthInvoice(f, '1');
  t.is((await f.api.post(`/v1/invoices/${cancelled.id}/cancel`)).status, 200);

  clock.advance(31 * 60_000);
  await f.td.daemon.invoices.service.expireDue();
  t.is((await f.api.get(`/v1/invoices/${expiring.id}`)).body.status, 'expired');

  const eth = f.chain('ethereum');
  await eth.pay(expiring.address, COINS.ETH, '1');
  await eth.pay(cancelled.address, COINS.ETH, '0.3');
  const a = (await f.api.get(`/v1/invoices/${expiring.id}`)).body;
  const b = (await f.api.get(`/v1/invoices/${cancelled.id}`)).body;
  t.like(a, { status: 'expired', late_payment: true, paid_amount: '1' });
  t.like(b, { status: 'cancelled', late_payment: true, paid_amount: '0.3' });
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '1.3');
  const late = await f.events('invoice.late_payment');
  t.deepEqual(late.map((e) => e.object_id).sort(), [expiring.id, cancelled.id].sort());
  t.true(await ledgerClean(f));
});

test('an underpaid invoice is final after the TTL: a later top-up is a late payment', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startInvoiceFixture({ clock });
  t.teardown(() => f.stop());
  const inv = await createEthInvoice(f, '1');
  const eth = f.chain('ethereum');
  await eth.pay(inv.address, COINS.ETH, '0.6');
  clock.advance(31 * 60_000);
  await f.td.daemon.invoices.service.expireDue();
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'underpaid');
  await eth.pay(inv.address, COINS.ETH, '0.4');
  const got = (await f.api.get(`/v1/invoices/${inv.id}`)).body;
  t.like(got, { status: 'underpaid', late_payment: true, paid_amount: '1' });
  t.is((await f.events('invoice.late_payment')).length, 1);
});

test('another coin sent to an invoice address is a stray payment: not credited and not paying the invoice until the merchant credits it (PRODUCT §17)', async (t) => {
  const f = await startInvoiceFixture();
  t.teardown(() => f.stop());
  const res = await f.api.post('/v1/invoices', { amount: '10', currency: 'USDT', coin_id: COINS.USDT_ETH });
  t.is(res.status, 201);
  const inv = res.body;
  await f.chain('ethereum').pay(inv.address, COINS.ETH, '0.1');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'new');
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '0');
  const strays = (await f.api.get(`/v1/strays?invoice_id=${inv.id}`)).body.items;
  t.is(strays.length, 1);
  t.like(strays[0], { coin_id: COINS.ETH, amount: '0.1', to_address: inv.address, invoice_id: inv.id, status: 'open' });
  const credited = await f.api.post(`/v1/strays/${strays[0].id}/credit`, {});
  t.is(credited.status, 200, JSON.stringify(credited.body));
  t.is((await balanceOf(f, accountBook(f.accountId), COINS.ETH)).available, '0.1');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'new', 'a credited stray still pays no invoice');
  await f.chain('ethereum').pay(inv.address, COINS.USDT_ETH, '10');
  t.is((await f.api.get(`/v1/invoices/${inv.id}`)).body.status, 'paid');
});
