/**
 * A node without archive state (issue 30 §1): it answers balances for its newest blocks only
 * (geth keeps 128; the provider emulator 8 here). With the chain's scan behind that window (its
 * node stuck behind while the chain went on), the slow scan of archived addresses still finds a
 * deposit (balances read at the newest block stand in, blocks read up to the scanned height), and
 * `ledger reconcile` names the reason instead of comparing the books with another height; once
 * the scan is back near the tip, reconcile compares again.
 */
import test from 'ava';
import { reconcile } from '../../../src/ledger/reconcile';
import { killAllAnvils } from '../../helpers/anvil';
import { startEvmFixture, type EvmFixture } from '../chains/evm/evm-fixture';

test.after.always(killAllAnvils);

const create = async (f: EvmFixture, body: Record<string, unknown>) => {
  const res = await f.api.post('/v1/addresses', body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

test('the slow scan finds a deposit to an archived address, and reconcile names the reason, while the scanned height is older than the node keeps state for', async (t) => {
  const f = await startEvmFixture({ overrides: { static_addresses: { archived_scan_hours: 100 } }, provider: { stateWindow: 8 } });
  t.teardown(() => f.stop());
  const p = f.provider!;
  const a = await create(f, { customer_id: 'cust-old', coin_id: f.coin.ETH, label: 'Old' });
  const archived = await f.api.post(`/v1/addresses/${a.id}/archive`, {});
  t.is(archived.status, 200);
  const txid = await f.pay(a.address, 'ETH', '0.4');
  await f.scanned();
  // The node stops at this block for the daemon while the chain goes on: the scanned height falls out of its state window.
  p.set({ frozenTip: await f.node.blockNumber() });
  await f.node.mine(20);

  const [scan] = f.td.daemon.archivedScans;
  const round = await scan!.run();
  t.like(round, { checked: 1, flagged: 1, found: 1 });
  const restored = (await f.api.get(`/v1/addresses/${a.id}`)).body;
  t.like(restored, { status: 'active' });
  t.like(restored.deposits[0], { txid, amount: '0.4' });

  const deps = { store: f.td.daemon.store, catalog: f.td.daemon.catalog, holdingsOf: (id: string) => f.td.daemon.chains.holdings(id) };
  const stale = await reconcile(deps);
  const line = stale.coins.find((c) => c.coin_id === f.coin.ETH)!;
  t.is(line.status, 'unavailable');
  t.regex(line.error ?? '', /no state at block \d+ \(a node without archive state\).*run it again once the chain's scanner is within the node's recent blocks/);

  p.set({ frozenTip: null });
  await f.scanned();
  const now = await reconcile(deps);
  t.true(
    now.coins.every((c) => c.status !== 'unavailable'),
    JSON.stringify(now.coins.map((c) => [c.ticker, c.status, c.error])),
  );
});
