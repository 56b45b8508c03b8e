/**
 * Several endpoints on a real chain (PRODUCT §15): the first refusing connections is left for the
 * next within the same poll, so nothing is missed and the coins never go to maintenance; a node
 * whose tip froze is stale, named so in the status, and another endpoint is used.
 */
import test from 'ava';
import { killAllAnvils } from '../../../helpers/anvil';
import { startFrozenTipProxy, type FrozenTipProxy } from '../../../helpers/frozen-tip-proxy';
import { CONFIRMATIONS, startEvmFixture } from './evm-fixture';
import { waitUntil } from '../../../helpers/poll';

test.after.always(killAllAnvils);

/** Polls with a deadline of 10,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> => waitUntil(what, ok, timeoutMs);

test('two endpoints, the first refusing connections: every payment is credited and the coins never go to maintenance', async (t) => {
  // Maintenance at the first failed poll: only the failover keeps the chain out of it.
  const f = await startEvmFixture({ gate: 'open', endpoints: (node, gate) => [gate!, node], chain: { maintenance_after_seconds: 0 } });
  t.teardown(() => f.stop());
  const a = await f.createInvoice('ETH', '0.3');
  const b = await f.createInvoice('USDT', '7');
  await f.gate!.close();
  let maintenance = false;
  const watch = setInterval(() => (maintenance ||= f.td.daemon.chains.status()[0]!.maintenance), 10);
  t.teardown(() => clearInterval(watch));

  const txA = await f.pay(a.address, 'ETH', '0.3');
  const txB = await f.pay(b.address, 'USDT', '7');
  await f.node.mine(CONFIRMATIONS);
  t.like(await f.waitInvoice(a.id, (i) => i.status === 'paid', 'A paid'), { paid_amount: '0.3' });
  t.like(await f.waitInvoice(b.id, (i) => i.status === 'paid', 'B paid'), { paid_amount: '7' });
  t.is((await f.transactions(a.id))[0].txid, txA);
  t.is((await f.transactions(b.id))[0].txid, txB);
  t.false(maintenance, 'never in maintenance');
  t.like(f.td.daemon.chains.status()[0], { maintenance: false, lag: 0 });
  t.is((await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: f.coin.ETH })).status, 201);
  t.true(await f.ledgerClean());
});

test('a frozen tip older than stale_after_seconds is used no more while a second endpoint is fresh: payments are credited from that one', async (t) => {
  let proxy: FrozenTipProxy | undefined;
  const f = await startEvmFixture({
    endpoints: async (node) => {
      proxy = await startFrozenTipProxy(node);
      return [proxy.url, node];
    },
    chain: { stale_after_seconds: 300, maintenance_after_seconds: 0 },
  });
  t.teardown(async () => {
    await f.stop();
    await proxy!.close();
  });
  await proxy!.freeze(14 * 60);
  const a = await f.createInvoice('ETH', '0.2');
  await f.pay(a.address, 'ETH', '0.2');
  await f.node.mine(CONFIRMATIONS);
  t.like(await f.waitInvoice(a.id, (i) => i.status === 'paid', 'paid'), { paid_amount: '0.2' });
  t.like(f.td.daemon.chains.status()[0], { maintenance: false, lag: 0 });
});

test('a frozen tip older than stale_after_seconds and no other endpoint: the coins go to maintenance, the status says "node behind" with the age; thawed, they are back', async (t) => {
  let proxy: FrozenTipProxy | undefined;
  const f = await startEvmFixture({
    endpoints: async (node) => {
      proxy = await startFrozenTipProxy(node);
      return [proxy.url];
    },
    // A long maintenance window: staleness does not wait for it.
    chain: { stale_after_seconds: 300, maintenance_after_seconds: 3600 },
  });
  t.teardown(async () => {
    await f.stop();
    await proxy!.close();
  });
  await proxy!.freeze(14 * 60);
  await until('maintenance', () => f.td.daemon.chains.status()[0]!.maintenance);
  t.like(f.td.daemon.chains.status()[0], { maintenance: true, maintenance_reason: 'node behind: newest block 14 min old' });
  const res = await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: f.coin.ETH });
  t.is(res.status, 503);
  proxy!.thaw();
  await f.node.mine(1);
  await until('maintenance lifted', () => !f.td.daemon.chains.status()[0]!.maintenance);
  t.is((await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: f.coin.ETH })).status, 201);
});
