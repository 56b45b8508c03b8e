/**
 * Node trouble on Tron: while the daemon cannot reach its full node, the chain's TRX and USDT are in
 * maintenance (catalogue, status) and new invoices for them answer 503 `unavailable` with nothing
 * written; blocks mined meanwhile are scanned once the node is reachable again, and every transfer
 * of the gap is found.
 */
import test from 'ava';
import { CONFIRMATIONS, startTronFixture, type TronFixture } from './tron-fixture';
import { waitUntil } from '../../../helpers/poll';

const catalogue = async (f: TronFixture) => {
  const res = await fetch(`${f.td.url}/v1/currencies`);
  const items = ((await res.json()) as { items: Array<{ id: string; maintenance: boolean }> }).items;
  return { TRX: items.find((c) => c.id === f.coin.TRX)!.maintenance, USDT: items.find((c) => c.id === f.coin.USDT)!.maintenance };
};

/** Polls with a deadline of 10,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> => waitUntil(what, ok, timeoutMs);

test('an unreachable Tron node puts TRX and USDT in maintenance (503 for new invoices); back, the gap is scanned and every transfer found', async (t) => {
  // Maintenance at the first failed poll (maintenance_after_seconds 0): what this test watches.
  const f = await startTronFixture({ gate: true, chain: { maintenance_after_seconds: 0 } });
  t.teardown(() => f.stop());
  const a = await f.createInvoice('TRX', '75');
  const b = await f.createInvoice('USDT', '7');
  t.deepEqual(await catalogue(f), { TRX: false, USDT: false });

  await f.gate!.close();
  await until('maintenance', async () => (await catalogue(f)).TRX);
  t.deepEqual(await catalogue(f), { TRX: true, USDT: true });
  const status = f.td.daemon.chains.status()[0]!;
  t.regex(status.last_error ?? '', /^tron node \w+: (unreachable|timed out)/);
  t.false((status.last_error ?? '').includes(String(f.gate!.port)), 'the node URL stays out of errors');

  const before = (await f.api.get('/v1/invoices?limit=100')).body.items.length;
  for (const ticker of ['TRX', 'USDT'] as const) {
    const res = await f.api.post('/v1/invoices', { amount: '1', currency: ticker, coin_id: f.coin[ticker] });
    t.is(res.status, 503);
    t.is(res.body.error.code, 'unavailable');
  }
  t.is((await f.api.get('/v1/invoices?limit=100')).body.items.length, before);

  const txA = f.pay(a.address, 'TRX', '75');
  f.node.mine(10);
  const txB = f.pay(b.address, 'USDT', '7');
  f.node.mine(CONFIRMATIONS + 10);
  t.is((await f.invoice(a.id)).status, 'new');

  await f.gate!.open();
  t.like(await f.waitInvoice(a.id, (i) => i.status === 'paid', 'A paid'), { paid_amount: '75' });
  t.like(await f.waitInvoice(b.id, (i) => i.status === 'paid', 'B paid'), { paid_amount: '7' });
  t.is((await f.transactions(a.id))[0].txid, txA);
  t.is((await f.transactions(b.id))[0].txid, txB);
  await until('maintenance lifted', async () => !(await catalogue(f)).TRX);
  t.is((await f.api.post('/v1/invoices', { amount: '1', currency: 'TRX', coin_id: f.coin.TRX })).status, 201);
  t.true(await f.ledgerClean());
});
