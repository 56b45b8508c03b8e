/**
 * Node trouble on bcoin: while the daemon cannot reach its Bitcoin node, BTC is in maintenance and
 * new BTC invoices answer 503 `unavailable` with nothing written; payments are made and mined
 * meanwhile. Once the node is reachable again every payment of the gap is found.
 */
import test from 'ava';
import { killAllBcoins } from '../../../helpers/bcoin';
import { BTC, CONFIRMATIONS, startBtcFixture, until } from './btc-fixture';

test.after.always(killAllBcoins);

test('an unreachable bcoin puts BTC in maintenance (503 for new invoices); back, the gap is scanned and every payment found', async (t) => {
  // Maintenance at the first failed poll (maintenance_after_seconds 0): what this test watches.
  const f = await startBtcFixture({ gate: true, chain: { maintenance_after_seconds: 0 } });
  t.teardown(() => f.stop());
  const inMaintenance = async () => {
    const items = (await (await fetch(`${f.td.url}/v1/currencies`)).json()) as { items: Array<{ id: string; maintenance: boolean }> };
    return items.items.find((c) => c.id === BTC)!.maintenance;
  };
  const a = await f.createInvoice('0.3');
  const b = await f.createInvoice('0.07');
  t.false(await inMaintenance());

  await f.gate!.close();
  await until(inMaintenance, 'maintenance');
  const status = f.td.daemon.chains.status()[0]!;
  t.regex(status.last_error ?? '', /^bitcoin node \w+: request failed/);
  t.false((status.last_error ?? '').includes(String(f.gate!.port)), 'the node URL stays out of errors');
  const count = async () => (await f.api.get('/v1/invoices?limit=100')).body.items.length;
  const before = await count();
  const refused = await f.api.post('/v1/invoices', { amount: '1', currency: 'BTC', coin_id: BTC });
  t.is(refused.status, 503);
  t.is(refused.body.error.code, 'unavailable');
  t.deepEqual(refused.body.error.details, {});
  t.is(await count(), before);

  // Behind the gate: payments in blocks the daemon has not seen.
  const txA = await f.pay(a.address, '0.3');
  await f.node.mine(5);
  const txB = await f.pay(b.address, '0.07');
  await f.node.mine(CONFIRMATIONS);

  await f.gate!.open();
  t.like(await f.waitInvoice(a.id, (i) => i.status === 'paid', 'A paid'), { paid_amount: '0.3' });
  t.like(await f.waitInvoice(b.id, (i) => i.status === 'paid', 'B paid'), { paid_amount: '0.07' });
  t.deepEqual([(await f.transactions(`invoice_id=${a.id}`))[0].txid, (await f.transactions(`invoice_id=${b.id}`))[0].txid], [txA, txB]);
  await until(async () => !(await inMaintenance()), 'maintenance lifted');
  t.like(f.td.daemon.chains.status()[0], { maintenance: false, lag: 0 });
  t.is((await f.api.post('/v1/invoices', { amount: '1', currency: 'BTC', coin_id: BTC })).status, 201);
  t.true(await f.ledgerClean());
});
