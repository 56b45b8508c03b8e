/**
 * A payment that leaves the mempool unconfirmed: the payer double-spends its coin in a block (built
 * by the test, never seen in the mempool), so bcoin drops the payment. The invoice goes back from
 * `pending`, nothing is credited.
 */
import test from 'ava';
import { killAllBcoins, sats } from '../../../helpers/bcoin';
import { mineBlockWith } from '../../../helpers/btc-block';
import { CONFIRMATIONS, startBtcFixture } from './btc-fixture';

test.after.always(killAllBcoins);

test('a payment double-spent before confirmation takes the invoice back from pending; nothing is credited', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  const { payer, rpc } = f.node;
  const [coin] = await payer.coins(rpc, sats('1'));
  const inv = await f.createInvoice('0.5');

  const payment = payer.sign([coin!], [{ address: inv.address, value: sats('0.5') }]);
  await rpc.call('sendrawtransaction', [payment.toHex()]);
  await f.waitInvoice(inv.id, (i) => i.status === 'pending', 'pending from the mempool');

  const doubleSpend = payer.sign([coin!], [{ address: payer.address, value: sats('1') }]);
  await mineBlockWith(f.node, [doubleSpend]);
  t.deepEqual(await f.node.mempool(), [], 'bcoin dropped the payment');

  const back = await f.waitInvoice(inv.id, (i) => i.status !== 'pending', 'the invoice back from pending');
  t.like(back, { status: 'new', paid_amount: '0', remaining_amount: '0.5' });
  const txs = await f.transactions(`invoice_id=${inv.id}`);
  t.deepEqual(
    txs.map((x: any) => [x.type, x.status, x.txid]),
    [['invoice_payment', 'reverted', payment.getId()]],
  );
  t.is((await f.events('invoice.reverted')).length, 1);
  t.is(await f.available(), '0');
  t.true(await f.ledgerClean());

  // The invoice can still be paid.
  await f.pay(inv.address, '0.5');
  await f.node.mine(CONFIRMATIONS);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.is(await f.available(), '0.5');
});
