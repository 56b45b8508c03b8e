/**
 * Invoices paid on a real local EVM chain (anvil), as the merchant sees them through the API: seen
 * in a block → `pending`; 3 confirmations → `paid` (or `underpaid`), credited less the platform fee.
 */
import test from 'ava';
import { FakeClock } from '../../../../src/shared/clock';
import { killAllAnvils } from '../../../helpers/anvil';
import { CONFIRMATIONS, startEvmFixture } from './evm-fixture';

test.after.always(killAllAnvils);

test('an ETH invoice paid exactly is pending in its block, paid at 3 confirmations, credited less the fee', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '1' });
  const inv = await f.createInvoice('ETH', '0.5');
  t.regex(inv.address, /^0x[0-9a-fA-F]{40}$/);

  const txid = await f.pay(inv.address, 'ETH', '0.5');
  const pending = await f.waitInvoice(inv.id, (i) => i.status !== 'new', 'pending');
  t.is(pending.status, 'pending');
  t.is(await f.available('ETH'), '0');

  await f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'paid');
  t.like(paid, { status: 'paid', paid_amount: '0.5', remaining_amount: '0', overpaid_amount: '0' });
  t.is(await f.available('ETH'), '0.495');
  const txs = await f.transactions(inv.id);
  t.is(txs.length, 1);
  t.like(txs[0], { type: 'invoice_payment', status: 'confirmed', amount: '0.5', fee: '0.005', net_amount: '0.495', txid });
  t.deepEqual(
    (await f.events('invoice.paid')).map((e) => e.data.invoice.id),
    [inv.id],
  );
  t.true(await f.ledgerClean());
});

test('a USDT invoice is paid by an ERC-20 transfer of the configured token', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '25.5');
  const txid = await f.pay(inv.address, 'USDT', '25.5');
  await f.waitInvoice(inv.id, (i) => i.status === 'pending', 'pending');
  await f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'paid');
  t.like(paid, { status: 'paid', paid_amount: '25.5' });
  t.is(await f.available('USDT'), '25.5');
  t.is(await f.available('ETH'), '0');
  t.like((await f.transactions(inv.id))[0], { txid, amount: '25.5', status: 'confirmed' });
  t.true(await f.ledgerClean());
});

test('underpaid, then topped up before the TTL: paid, both transfers credited', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('ETH', '1');
  await f.pay(inv.address, 'ETH', '0.4');
  await f.node.mine(CONFIRMATIONS - 1);
  const under = await f.waitInvoice(inv.id, (i) => i.status === 'underpaid', 'underpaid');
  t.like(under, { paid_amount: '0.4', remaining_amount: '0.6' });
  t.is(await f.available('ETH'), '0.4');

  await f.pay(inv.address, 'ETH', '0.6');
  await f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '1', remaining_amount: '0' });
  t.is(await f.available('ETH'), '1');
  t.is((await f.transactions(inv.id)).length, 2);
  t.true(await f.ledgerClean());
});

test('overpaid: paid with overpaid_amount, the whole transfer credited', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('USDT', '10');
  await f.pay(inv.address, 'USDT', '12.25');
  await f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '12.25', overpaid_amount: '2.25', remaining_amount: '0' });
  t.is(await f.available('USDT'), '12.25');
  t.is((await f.events('invoice.paid'))[0]!.data.invoice.overpaid_amount, '2.25');
});

test('two transfers to the invoice address are summed', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('ETH', '0.3');
  const a = await f.pay(inv.address, 'ETH', '0.1');
  const b = await f.pay(inv.address, 'ETH', '0.2');
  await f.node.mine(CONFIRMATIONS - 1);
  const paid = await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.like(paid, { paid_amount: '0.3', overpaid_amount: '0' });
  t.deepEqual((await f.transactions(inv.id)).map((x: { txid: string }) => x.txid).sort(), [a, b].sort());
  t.is(await f.available('ETH'), '0.3');
});

test('a payment after expiry: still expired, late_payment true, credited', async (t) => {
  const clock = new FakeClock(new Date());
  const f = await startEvmFixture({ clock });
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('ETH', '0.2');
  clock.advance(31 * 60_000);
  // The expiry job's work, done now rather than at its next minute.
  await f.td.daemon.invoices.service.expireDue();
  t.is((await f.invoice(inv.id)).status, 'expired');

  await f.pay(inv.address, 'ETH', '0.2');
  await f.node.mine(CONFIRMATIONS - 1);
  const late = await f.waitInvoice(inv.id, (i) => i.late_payment === true && i.paid_amount === '0.2', 'late payment');
  t.is(late.status, 'expired');
  t.is(await f.available('ETH'), '0.2');
  t.is((await f.events('invoice.late_payment')).length, 1);
  t.true(await f.ledgerClean());
});

test('a transfer to an address nobody watches changes nothing', async (t) => {
  const f = await startEvmFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('ETH', '0.1');
  await f.pay('0x000000000000000000000000000000000000dEaD', 'ETH', '0.1');
  await f.node.mine(CONFIRMATIONS);
  await f.scanned();
  const got = await f.invoice(inv.id);
  t.like(got, { status: 'new', paid_amount: '0' });
  t.is(await f.available('ETH'), '0');
});
