/**
 * Invoices paid on a real local Bitcoin node (bcoin regtest), as the merchant sees them through the
 * API: seen in the mempool → `pending`; 2 confirmations → `paid` (or `underpaid`), credited less the
 * platform fee.
 */
import test from 'ava';
import { FakeClock } from '../../../../src/shared/clock';
import { killAllBcoins } from '../../../helpers/bcoin';
import { CONFIRMATIONS, startBtcFixture } from './btc-fixture';

test.after.always(killAllBcoins);

test.serial('a BTC invoice paid exactly is pending from the mempool, paid at 2 confirmations, credited less the fee', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const inv = await f.createInvoice('0.5');
  t.regex(inv.address, /^rb1q[02-9ac-hj-np-z]{38}$/);

  const txid = await f.pay(inv.address, '0.5');
  const pending = await f.waitInvoice(inv.id, (i) => i.status !== 'new', 'pending from the mempool');
  t.like(pending, { status: 'pending', paid_amount: '0' });
  t.like((await f.transactions(`invoice_id=${inv.id}`))[0], { type: 'invoice_payment', status: 'pending', amount: '0.5', txid });
  t.is(await f.available(), '0');

  await f.node.mine(CONFIRMATIONS - 1);
  await f.waitScanned();
  t.is((await f.invoice(inv.id)).status, 'pending', 'one confirmation is not enough');

  await f.node.mine(1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'paid');
  t.like(paid, { status: 'paid', paid_amount: '0.5', remaining_amount: '0', overpaid_amount: '0' });
  t.is(await f.available(), '0.495');
  const txs = await f.transactions(`invoice_id=${inv.id}`);
  t.is(txs.length, 1);
  t.like(txs[0], { type: 'invoice_payment', status: 'confirmed', amount: '0.5', fee: '0.005', net_amount: '0.495', txid });
  t.deepEqual(
    (await f.events('invoice.pending')).map((e) => e.object_id),
    [inv.id],
  );
  t.deepEqual(
    (await f.events('invoice.paid')).map((e) => e.data.invoice.id),
    [inv.id],
  );
  t.true(await f.ledgerClean());
});

test.serial('underpaid, then topped up before the TTL: paid, both transfers credited', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('0.01');
  await f.pay(inv.address, '0.004');
  await f.node.mine(CONFIRMATIONS);
  const under = await f.waitInvoice(inv.id, (i) => i.status === 'underpaid', 'underpaid');
  t.like(under, { paid_amount: '0.004', remaining_amount: '0.006' });
  t.is(await f.available(), '0.004');

  await f.pay(inv.address, '0.006');
  await f.node.mine(CONFIRMATIONS);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '0.01', remaining_amount: '0' });
  t.is(await f.available(), '0.01');
  t.is((await f.transactions(`invoice_id=${inv.id}`)).length, 2);
  t.true(await f.ledgerClean());
});

test.serial('overpaid: paid with overpaid_amount, the whole transfer credited', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('0.1');
  await f.pay(inv.address, '0.12345678');
  await f.node.mine(CONFIRMATIONS);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '0.12345678', overpaid_amount: '0.02345678', remaining_amount: '0' });
  t.is(await f.available(), '0.12345678');
  t.is((await f.events('invoice.paid'))[0]!.data.invoice.overpaid_amount, '0.02345678');
});

test.serial('two outputs to the invoice address in one transaction are two payments, summed', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('0.3');
  const txid = await f.pay(inv.address, '0.1', '0.2');
  await f.waitInvoice(inv.id, (i) => i.status === 'pending', 'pending');
  await f.node.mine(CONFIRMATIONS);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '0.3', remaining_amount: '0' });
  const txs = await f.transactions(`invoice_id=${inv.id}`);
  t.deepEqual(txs.map((x: any) => [x.txid, x.amount, x.status]).sort(), [
    [txid, '0.1', 'confirmed'],
    [txid, '0.2', 'confirmed'],
  ]);
  t.is(await f.available(), '0.3');
  t.true(await f.ledgerClean());
});

test.serial('a payment after expiry: still expired, late_payment true, credited', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startBtcFixture({ clock });
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('0.02');
  clock.advance(31 * 60_000);
  // The expiry job's work, done now rather than at its next minute.
  await f.td.daemon.invoices.service.expireDue();
  t.is((await f.invoice(inv.id)).status, 'expired');

  await f.pay(inv.address, '0.02');
  await f.node.mine(CONFIRMATIONS);
  const late = await f.waitInvoice(inv.id, (i) => i.late_payment === true && i.paid_amount === '0.02', 'late payment');
  t.is(late.status, 'expired');
  t.is(await f.available(), '0.02');
  t.is((await f.events('invoice.late_payment')).length, 1);
  t.true(await f.ledgerClean());
});

test.serial('a fiat invoice priced in BTC locks the rate at creation and is paid by that BTC amount', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('34', { currency: 'USD' });
  t.like(inv, { currency: 'USD', amount: '34', amount_crypto: '0.0005', rate_locked: '68000', fiat_currency: 'USD', amount_fiat: '34' });
  t.truthy(inv.rate_locked_at);
  await f.pay(inv.address, inv.amount_crypto);
  await f.node.mine(CONFIRMATIONS);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '0.0005', amount_fiat: '34', rate_locked: '68000' });
  t.is(await f.available(), '0.0005');
});
