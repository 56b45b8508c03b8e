/**
 * A reorganisation on bcoin: `invalidateblock` takes the block holding a confirmed payment out of the
 * best chain (bcoin drops its transactions), and a longer branch without it is mined. The credit is
 * reversed with an adjustment, the invoice recomputed and invoice.reverted recorded; the ledger
 * stays true.
 */
import test from 'ava';
import { killAllBcoins } from '../../../helpers/bcoin';
import { waitUntil } from '../../../helpers/poll';
import { CONFIRMATIONS, startBtcFixture } from './btc-fixture';

test.after.always(killAllBcoins);

test('invalidateblock of the block holding a confirmed payment: adjustment, invoice new again, invoice.reverted, ledger clean', async (t) => {
  const f = await startBtcFixture();
  t.teardown(() => f.stop());
  await f.setAccount({ platform_fee_percent: '2' });
  const inv = await f.createInvoice('1');
  const txid = await f.pay(inv.address, '1');
  const [paymentBlock] = await f.node.mine(CONFIRMATIONS);
  await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid');
  t.is(await f.available(), '0.98');
  const oldTip = await f.node.height();

  await f.node.invalidateBlock(paymentBlock!);
  t.deepEqual(await f.node.mempool(), [], 'bcoin dropped the payment with its block');
  await f.node.mine(CONFIRMATIONS + 1);
  t.true((await f.node.height()) > oldTip);

  const reverted = await f.waitInvoice(inv.id, (i) => i.status !== 'paid', 'the invoice recomputed');
  t.like(reverted, { status: 'new', paid_amount: '0', remaining_amount: '1' });
  t.is(await f.available(), '0');
  const txs = await f.transactions(`invoice_id=${inv.id}`);
  t.like(
    txs.find((x: { type: string }) => x.type === 'invoice_payment'),
    { status: 'reverted', txid },
  );
  t.like(
    txs.find((x: { type: string }) => x.type === 'adjustment'),
    { status: 'confirmed', amount: '-1', fee: '-0.02', net_amount: '-0.98', txid },
  );
  const events = await f.events('invoice.reverted');
  t.is(events.length, 1);
  t.is(events[0]!.data.invoice.id, inv.id);
  t.true(await f.ledgerClean());
  // The invoice is recomputed as the reorganisation is scanned; the tip the node has by then may be
  // scanned a moment later (a loaded machine: lag 1 at once, seen in a rehearsal).
  const chain = () => f.td.daemon.chains.status()[0]!;
  await waitUntil(
    () => `the chain scanned to its tip: ${JSON.stringify(chain())}`,
    () => chain().lag === 0,
    10_000,
  );
  t.like(chain(), { maintenance: false, lag: 0 });
});
