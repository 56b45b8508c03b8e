/**
 * Node trouble on a real chain: while the daemon cannot reach its EVM node, the chain's coins are in
 * maintenance (catalogue, status) and new invoices for them answer 503 `unavailable` with nothing
 * written; the node is stopped and restarted meanwhile and blocks are mined the daemon has not
 * seen. Once the node is reachable again every transfer of the gap is found.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { killAllAnvils, restartAnvil } from '../../../helpers/anvil';
import { CONFIRMATIONS, startEvmFixture, type EvmFixture } from './evm-fixture';
import { waitUntil } from '../../../helpers/poll';

test.after.always(killAllAnvils);

const catalogue = async (f: EvmFixture) => {
  const res = await fetch(`${f.td.url}/v1/currencies`);
  const items = ((await res.json()) as { items: Array<{ id: string; maintenance: boolean }> }).items;
  return { ETH: items.find((c) => c.id === f.coin.ETH)!.maintenance, USDT: items.find((c) => c.id === f.coin.USDT)!.maintenance };
};

const invoiceCount = async (f: EvmFixture) => (await f.api.get('/v1/invoices?limit=100')).body.items.length;

/** Polls with a deadline of 10,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> => waitUntil(what, ok, timeoutMs);

test('an unreachable node puts its coins in maintenance (503 for new invoices); back, the gap is scanned and every transfer found', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-anvil-'));
  // Maintenance at the first failed poll (maintenance_after_seconds 0): what this test watches.
  const f = await startEvmFixture({ gate: 'open', stateFile: path.join(dir, 'state.json'), chain: { maintenance_after_seconds: 0 } });
  t.teardown(async () => {
    await f.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const a = await f.createInvoice('ETH', '0.3');
  const b = await f.createInvoice('USDT', '7');
  t.deepEqual(await catalogue(f), { ETH: false, USDT: false });

  await f.gate!.close();
  await until('maintenance', async () => (await catalogue(f)).ETH);
  t.deepEqual(await catalogue(f), { ETH: true, USDT: true });
  const status = f.td.daemon.chains.status()[0]!;
  t.true(status.maintenance);
  t.regex(status.last_error ?? '', /^evm node eth_\w+: (unreachable|timed out|bad data)/);
  t.false((status.last_error ?? '').includes(String(f.gate!.port)), 'the node URL stays out of errors');

  const before = await invoiceCount(f);
  for (const ticker of ['ETH', 'USDT'] as const) {
    const res = await f.api.post('/v1/invoices', { amount: '1', currency: ticker, coin_id: f.coin[ticker] });
    t.is(res.status, 503);
    t.is(res.body.error.code, 'unavailable');
    t.deepEqual(res.body.error.details, {});
  }
  t.is(await invoiceCount(f), before);

  // Behind the gate: the node stops and starts again with its chain, then blocks come and go unseen.
  await f.node.stop();
  f.node = await restartAnvil(f.node);
  const txA = await f.pay(a.address, 'ETH', '0.3');
  await f.node.mine(10);
  const txB = await f.pay(b.address, 'USDT', '7');
  await f.node.mine(CONFIRMATIONS + 10);
  t.is((await f.invoice(a.id)).status, 'new');

  await f.gate!.open();
  const paidA = await f.waitInvoice(a.id, (i) => i.status === 'paid', 'A paid');
  const paidB = await f.waitInvoice(b.id, (i) => i.status === 'paid', 'B paid');
  t.is(paidA.paid_amount, '0.3');
  t.is(paidB.paid_amount, '7');
  t.is((await f.transactions(a.id))[0].txid, txA);
  t.is((await f.transactions(b.id))[0].txid, txB);
  await until('maintenance lifted', async () => !(await catalogue(f)).ETH);
  t.false(f.td.daemon.chains.status()[0]!.maintenance);
  t.is(f.td.daemon.chains.status()[0]!.lag, 0);
  t.is((await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: f.coin.ETH })).status, 201);
  t.true(await f.ledgerClean());
});

test('a stalled node (tip unchanged longer than stall_seconds) puts its coins in maintenance until a block comes', async (t) => {
  const f = await startEvmFixture({ watch: { stall_seconds: 1 } });
  t.teardown(() => f.stop());
  await until('stall noticed', async () => (await catalogue(f)).ETH, 5000);
  t.regex(f.td.daemon.chains.status()[0]!.last_error ?? '', /has not moved for more than 1 s/);
  const res = await f.api.post('/v1/invoices', { amount: '1', currency: 'USDT', coin_id: f.coin.USDT });
  t.is(res.status, 503);
  t.is(res.body.error.code, 'unavailable');
  await f.node.mine(1);
  await until('maintenance lifted', async () => !(await catalogue(f)).ETH, 5000);
  t.is((await f.api.post('/v1/invoices', { amount: '1', currency: 'USDT', coin_id: f.coin.USDT })).status, 201);
});

test('a daemon started while its node is unreachable takes no invoice for its coins until the node answers', async (t) => {
  const f = await startEvmFixture({ gate: 'closed' });
  t.teardown(() => f.stop());
  // At once, before any poll: the coins cannot be watched yet.
  t.deepEqual(await catalogue(f), { ETH: true, USDT: true });
  const refused = await f.api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: f.coin.ETH });
  t.is(refused.status, 503);
  t.is(refused.body.error.code, 'unavailable');
  t.is(await invoiceCount(f), 0);
  t.is(f.td.daemon.chains.status()[0]!.scanned_height, null);

  await f.node.mine(5);
  await f.gate!.open();
  await until('maintenance lifted', async () => !(await catalogue(f)).ETH);
  const inv = await f.createInvoice('ETH', '0.2');
  await f.pay(inv.address, 'ETH', '0.2');
  await f.node.mine(CONFIRMATIONS - 1);
  t.like(await f.waitInvoice(inv.id, (i) => i.status === 'paid', 'paid'), { paid_amount: '0.2' });
});
