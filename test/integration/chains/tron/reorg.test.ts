/**
 * A reorganisation on the Tron node stand-in: the blocks holding a confirmed payment are dropped and
 * a longer branch without it is mined. The credit is reversed with an adjustment, the invoice
 * recomputed and invoice.reverted recorded, as on the other chains; the ledger stays true.
 */
import test from 'ava';
import { CONFIRMATIONS, startTronFixture } from './tron-fixture';

test('a reorganisation that drops a confirmed USDT payment reverts it: adjustment, invoice new again, invoice.reverted, ledger clean', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '2' });
  const inv = await f.createInvoice('USDT', '50');
  const txid = f.pay(inv.address, 'USDT', '50');
  f.node.mine(CONFIRMATIONS - 1);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.is(await f.available('USDT'), '49');
  const oldTip = f.node.height;

  f.node.reorg(CONFIRMATIONS);
  f.node.mine(CONFIRMATIONS + 2);
  t.true(f.node.height > oldTip);

  const reverted = await f.waitInvoice(inv.id, (i) => i.status !== 'paid', 'the invoice recomputed');
  t.like(reverted, { status: 'new', paid_amount: '0', remaining_amount: '50' });
  t.is(await f.available('USDT'), '0');
  const txs = await f.transactions(inv.id);
  t.like(
    txs.find((x: { type: string }) => x.type === 'invoice_payment'),
    { status: 'reverted', txid },
  );
  t.like(
    txs.find((x: { type: string }) => x.type === 'adjustment'),
    { status: 'confirmed', amount: '-50', fee: '-1', net_amount: '-49', txid },
  );
  t.deepEqual(
    (await f.events('invoice.reverted')).map((e) => e.data.invoice.id),
    [inv.id],
  );
  t.true(await f.ledgerClean());

  // Paid again on the new branch: credited again, once.
  f.pay(inv.address, 'USDT', '50');
  f.node.mine(CONFIRMATIONS - 1);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid again');
  t.is(await f.available('USDT'), '49');
  t.true(await f.ledgerClean());
});

test('a TRX payment seen but not yet confirmed and reorganised away leaves the invoice new, nothing credited', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('TRX', '30');
  f.pay(inv.address, 'TRX', '30');
  await f.waitInvoice(inv.id, (i) => i.status === 'pending', 'pending');

  f.node.reorg(1);
  f.node.mine(CONFIRMATIONS + 1);
  const got = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'recomputed');
  t.like(got, { status: 'new', paid_amount: '0' });
  t.is(await f.available('TRX'), '0');
  t.true(await f.ledgerClean());
});

test('a reorganisation that drops a confirmed TRX payment reverts it: adjustment, invoice new again, ledger clean', async (t) => {
  const f = await startTronFixture();
  t.teardown(() => f.stop());
  const inv = await f.createInvoice('TRX', '40');
  const txid = f.pay(inv.address, 'TRX', '40');
  f.node.mine(CONFIRMATIONS - 1);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.is(await f.available('TRX'), '40');

  f.node.reorg(CONFIRMATIONS);
  t.is(f.node.trxBalance(inv.address), 0n, 'the stand-in undid the payment');
  f.node.mine(CONFIRMATIONS + 1);
  t.like(await f.waitInvoice(inv.id, (i) => i.status !== 'paid', 'reverted'), { status: 'new', paid_amount: '0' });
  t.is(await f.available('TRX'), '0');
  const txs = await f.transactions(inv.id);
  t.like(
    txs.find((x: { type: string }) => x.type === 'invoice_payment'),
    { status: 'reverted', txid },
  );
  t.like(
    txs.find((x: { type: string }) => x.type === 'adjustment'),
    { amount: '-40' },
  );
  t.true(await f.ledgerClean());
});
