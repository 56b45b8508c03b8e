/**
 * Several endpoints on bcoin (PRODUCT §15): the first refusing connections is left for the next
 * within the same poll, so every payment is found and BTC never goes to maintenance.
 */
import test from 'ava';
import { killAllBcoins } from '../../../helpers/bcoin';
import { CONFIRMATIONS, startBtcFixture } from './btc-fixture';

test.after.always(killAllBcoins);

test('two endpoints, the first refusing connections: every payment is credited and BTC never goes to maintenance', async (t) => {
  // The gate is the first endpoint, the node itself the second; maintenance at the first failed poll.
  const f = await startBtcFixture({ gate: true, chain: { maintenance_after_seconds: 0 }, backupEndpoint: true });
  t.teardown(() => f.stop());
  const a = await f.createInvoice('0.3');
  await f.gate!.close();
  let maintenance = false;
  const watch = setInterval(() => (maintenance ||= f.td.daemon.chains.status()[0]!.maintenance), 10);
  t.teardown(() => clearInterval(watch));

  const tx = await f.pay(a.address, '0.3');
  await f.node.mine(CONFIRMATIONS);
  t.like(await f.waitInvoice(a.id, (i) => i.status === 'paid', 'paid'), { paid_amount: '0.3' });
  t.is((await f.transactions(`invoice_id=${a.id}`))[0].txid, tx);
  t.false(maintenance, 'never in maintenance');
  t.like(f.td.daemon.chains.status()[0], { maintenance: false, lag: 0 });
  t.true(await f.ledgerClean());
});
