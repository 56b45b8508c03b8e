/**
 * Invoices paid in TRX and TRC-20 USDT on the Tron node stand-in, as the merchant sees them through
 * the API: seen in a block → `pending`; 3 confirmations → `paid` (or `underpaid`), credited less the
 * platform fee. A TRC-20 call that failed on chain credits nothing.
 */
import test from 'ava';
import { FakeClock } from '../../../../src/shared/clock';
import { CONFIRMATIONS, startTronFixture } from './tron-fixture';

test('a TRX invoice on a base58 T-address paid exactly is pending in its block, paid at 3 confirmations, credited less the fee', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const inv = await f.createInvoice('TRX', '150');
  t.regex(inv.address, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
  t.is(inv.network, 'tron');

  const txid = f.pay(inv.address, 'TRX', '150');
  const pending = await f.waitInvoice(inv.id, (i) => i.status !== 'new', 'pending');
  t.is(pending.status, 'pending');
  t.is(await f.available('TRX'), '0');

  f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'paid');
  t.like(paid, { status: 'paid', paid_amount: '150', remaining_amount: '0', overpaid_amount: '0' });
  t.is(await f.available('TRX'), '148.5');
  const txs = await f.transactions(inv.id);
  t.is(txs.length, 1);
  t.like(txs[0], { type: 'invoice_payment', status: 'confirmed', network: 'tron', amount: '150', fee: '1.5', net_amount: '148.5', txid });
  t.deepEqual(
    (await f.events('invoice.paid')).map((e) => e.data.invoice.id),
    [inv.id],
  );
  t.true(await f.ledgerClean());
});

test('a USDT invoice is paid by a TRC-20 transfer of the configured token', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '25.5');
  const txid = f.pay(inv.address, 'USDT', '25.5');
  await f.waitInvoice(inv.id, (i) => i.status === 'pending', 'pending');
  f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'paid');
  t.like(paid, { status: 'paid', paid_amount: '25.5' });
  t.is(await f.available('USDT'), '25.5');
  t.is(await f.available('TRX'), '0');
  t.like((await f.transactions(inv.id))[0], { txid, amount: '25.5', status: 'confirmed' });
  t.true(await f.ledgerClean());
});

test('a TRC-20 transfer whose call failed on chain credits nothing: the invoice stays new', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '10');
  f.pay(inv.address, 'USDT', '10', { revert: true });
  f.node.mine(CONFIRMATIONS);
  const got = await f.waitInvoice(inv.id, () => true, 'read');
  t.like(got, { status: 'new', paid_amount: '0' });
  t.is(await f.available('USDT'), '0');
  t.deepEqual(await f.transactions(inv.id), []);
  t.deepEqual(await f.events('invoice.pending'), []);
});

test('underpaid in USDT, then topped up before the TTL: paid, both transfers credited', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '100');
  f.pay(inv.address, 'USDT', '40');
  f.node.mine(CONFIRMATIONS - 1);
  const under = await f.waitInvoice(inv.id, (i) => i.status === 'underpaid', 'underpaid');
  t.like(under, { paid_amount: '40', remaining_amount: '60' });
  t.is(await f.available('USDT'), '40');

  f.pay(inv.address, 'USDT', '60');
  f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '100', remaining_amount: '0' });
  t.is(await f.available('USDT'), '100');
  t.is((await f.transactions(inv.id)).length, 2);
  t.true(await f.ledgerClean());
});

test('overpaid in TRX: paid with overpaid_amount, the whole transfer credited', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('TRX', '10');
  f.pay(inv.address, 'TRX', '12.25');
  f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '12.25', overpaid_amount: '2.25', remaining_amount: '0' });
  t.is(await f.available('TRX'), '12.25');
});

test('a TRX payment after expiry: still expired, late_payment true, credited', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startTronFixture({ clock });
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('TRX', '20');
  clock.advance(31 * 60_000);
  await f.td.daemon.invoices.service.expireDue();
  t.is((await f.invoice(inv.id)).status, 'expired');

  f.pay(inv.address, 'TRX', '20');
  f.node.mine(CONFIRMATIONS - 1);
  const late = await f.waitInvoice(inv.id, (i) => i.late_payment === true && i.paid_amount === '20', 'late payment');
  t.is(late.status, 'expired');
  t.is(await f.available('TRX'), '20');
  t.is((await f.events('invoice.late_payment')).length, 1);
  t.true(await f.ledgerClean());
});

test('underpaid in TRX, then topped up: underpaid with what remains, then paid, both transfers credited', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('TRX', '50');
  f.pay(inv.address, 'TRX', '20.5');
  f.node.mine(CONFIRMATIONS - 1);
  t.like(await f.waitInvoice(inv.id, (i) => i.status === 'underpaid', 'underpaid'), { paid_amount: '20.5', remaining_amount: '29.5' });
  t.is(await f.available('TRX'), '20.5');
  f.pay(inv.address, 'TRX', '29.5');
  f.node.mine(CONFIRMATIONS - 1);
  t.like(await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid'), { paid_amount: '50', remaining_amount: '0', overpaid_amount: '0' });
  t.is(await f.available('TRX'), '50');
  t.is((await f.transactions(inv.id)).length, 2);
  t.deepEqual(
    (await f.events('invoice.underpaid')).map((e) => e.data.invoice.id),
    [inv.id],
  );
  t.true(await f.ledgerClean());
});

test('overpaid in USDT: paid with overpaid_amount, the whole transfer credited', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '15');
  f.pay(inv.address, 'USDT', '15.000001');
  f.node.mine(CONFIRMATIONS - 1);
  t.like(await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid'), { paid_amount: '15.000001', overpaid_amount: '0.000001', remaining_amount: '0' });
  t.is(await f.available('USDT'), '15.000001');
  t.true(await f.ledgerClean());
});

test('a USDT payment after expiry: still expired, late_payment true, credited', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startTronFixture({ clock });
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '12');
  clock.advance(31 * 60_000);
  await f.td.daemon.invoices.service.expireDue();
  t.is((await f.invoice(inv.id)).status, 'expired');
  f.pay(inv.address, 'USDT', '12');
  f.node.mine(CONFIRMATIONS - 1);
  const late = await f.waitInvoice(inv.id, (i) => i.late_payment === true && i.paid_amount === '12', 'late payment');
  t.is(late.status, 'expired');
  t.is(await f.available('USDT'), '12');
  t.is((await f.events('invoice.late_payment')).length, 1);
  t.true(await f.ledgerClean());
});
