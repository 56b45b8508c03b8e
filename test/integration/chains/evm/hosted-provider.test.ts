/**
 * A hosted EVM endpoint's limits and a node's outage together (issue 30 §1, §4): blocks missed
 * while the endpoint refused connections are caught up behind QuickNode's 5-block eth_getLogs
 * limit, a 20-call batch cap and geth's cap on a batch's answer; every payment of the gap is
 * credited and the chain leaves maintenance. The limits are learned: after the first refusals the
 * endpoint is asked within them.
 */
import test from 'ava';
import { killAllAnvils } from '../../../helpers/anvil';
import { HOSTED } from '../../../helpers/evm-provider';
import { CONFIRMATIONS, startEvmFixture, type EvmFixture, type Ticker } from './evm-fixture';
import { waitUntil } from '../../../helpers/poll';

test.after.always(killAllAnvils);

/** Polls with a deadline of 30,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> => waitUntil(what, ok, timeoutMs);

const maintenance = (f: EvmFixture): boolean => f.td.daemon.chains.status()[0]!.maintenance;

test('300 blocks missed in an outage behind a 5-block log limit, 20-call batches and a capped answer size: every payment credited, the chain out of maintenance', async (t) => {
  // geth's 25 MB cap scaled to anvil's small blocks (about 1 KB each): 16 KB bites a 20-block batch.
  // Maintenance at the first failed poll (maintenance_after_seconds 0): the outage is what this test makes.
  const f = await startEvmFixture({ provider: { ...HOSTED, responseCap: 16_000 }, chain: { maintenance_after_seconds: 0 } });
  t.teardown(() => f.stop());
  const p = f.provider!;
  const invoices: Array<{ id: string; address: string; ticker: Ticker; amount: string }> = [];
  for (let i = 0; i < 6; i++) {
    const ticker: Ticker = i % 2 === 0 ? 'ETH' : 'USDT';
    const amount = ticker === 'ETH' ? `0.0${i + 1}` : `${i + 1}`;
    const inv = await f.createInvoice(ticker, amount);
    invoices.push({ id: inv.id, address: inv.address, ticker, amount });
  }

  await p.refuse();
  await until('maintenance', () => maintenance(f));
  const start = await f.node.blockNumber();
  // 300 blocks, the payments spread among them (each payment mines a block of its own).
  for (const inv of invoices) {
    await f.node.mine(44);
    await f.pay(inv.address, inv.ticker, inv.amount);
  }
  await f.node.mine(300 - ((await f.node.blockNumber()) - start) + CONFIRMATIONS);
  t.true((await f.node.blockNumber()) - start >= 300);

  await p.accept();
  for (const inv of invoices)
    t.like(await f.waitInvoice(inv.id, (i) => i.status === 'paid', `${inv.ticker} ${inv.amount} paid`, 60_000), { paid_amount: inv.amount });
  await until('maintenance lifted', () => !maintenance(f));
  await until('caught up', () => f.td.daemon.chains.status()[0]!.lag === 0);
  t.true(await f.ledgerClean());

  // Each limit bit, and was learned: a few refusals, not one a request.
  t.true(p.counts.batchesRefused > 0, 'the batch cap was met');
  t.true(p.counts.logsRefused > 0, 'the log range limit was met');
  t.true(p.counts.tooLarge > 0, 'the answer size cap was met');
  t.true(p.counts.batchesRefused + p.counts.logsRefused <= 10, `refusals: ${JSON.stringify(p.counts)}`);
  const before = { ...p.counts };
  await f.node.mine(60);
  await until('caught up again', () => f.td.daemon.chains.status()[0]!.lag === 0);
  t.is(p.counts.batchesRefused, before.batchesRefused, 'no batch over the cap once learned');
  t.is(p.counts.logsRefused, before.logsRefused, 'no log range over the limit once learned');
});
