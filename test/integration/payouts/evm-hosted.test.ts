/**
 * Payouts, sweeps and top-ups through nodes that are not anvil (issue 30 §1), by the provider
 * emulator: a chain without EIP-1559 (geth answers base fees of 0 and refuses type 2), configured
 * `fee_model: legacy`, pays out with legacy EIP-155 transactions; 30 % of requests answered HTTP 429 for 30 s (with geth's
 * indexer at work meanwhile) miss no payment and record no refusal: the payout completes.
 */
import test from 'ava';
import { Transaction } from 'ethers';
import { killAllAnvils } from '../../helpers/anvil';
import { elsewhere, eth, startEvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

test('a chain without EIP-1559: the deposit is swept and the ETH and USDT withdrawals are paid with legacy (type 0) transactions; the books match the chain', async (t) => {
  const f = await startEvmPayoutFixture({ provider: { noEip1559: true }, chain: { fee_model: 'legacy' } });
  t.teardown(() => f.stop());
  await f.paidInvoice('ETH', '1');
  await f.paidInvoice('USDT', '50');
  const stop = f.miner();
  t.teardown(stop);
  const to = elsewhere();
  const w1 = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.25', to_address: to });
  const w2 = await f.withdraw({ coin_id: f.coin.USDT, amount: '20', to_address: to });
  const done1 = await f.waitWithdrawal(w1.id, (w) => w.status === 'completed' || w.status === 'failed', 'ETH withdrawal finished', 60_000);
  const done2 = await f.waitWithdrawal(w2.id, (w) => w.status === 'completed' || w.status === 'failed', 'USDT withdrawal finished', 60_000);
  t.is(done1.status, 'completed', String(done1.failure_reason));
  t.is(done2.status, 'completed', String(done2.failure_reason));
  await f.quiet();
  await stop();
  t.is(await f.onChain(to, 'ETH'), eth('0.25'));
  t.is(await f.onChain(to, 'USDT'), 20_000_000n);
  for (const done of [done1, done2]) t.is(Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [done.txid])).type, 0, 'legacy');
  const sends = await f.td.daemon.store.read.query(`SELECT kind, status FROM account_sends`);
  t.true(sends.some((s: { kind: string }) => s.kind === 'sweep'));
  t.false(
    sends.some((s: { status: string }) => s.status === 'dropped'),
    'nothing refused',
  );
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('30 % of requests answered 429 for 30 s, geth indexing meanwhile: every payment credited, the payout completed, no send refused', async (t) => {
  const f = await startEvmPayoutFixture({ provider: {} });
  t.teardown(() => f.stop());
  await f.paidInvoice('USDT', '30');
  const p = f.provider!;
  const stop = f.miner(200);
  t.teardown(stop);
  const payments = [
    ['ETH', '0.2'],
    ['USDT', '5'],
    ['ETH', '0.3'],
    ['USDT', '6'],
  ] as const;
  const invoices = [];
  for (const [ticker, amount] of payments) invoices.push(await f.createInvoice(ticker, amount));
  p.set({ rateLimit: { fraction: 0.3, retryAfterSeconds: 1 }, indexing: true });
  for (const [i, inv] of invoices.entries()) await f.pay(inv.address, payments[i]![0], payments[i]![1]);
  // The limits last 30 s from here (longer in all: the payments took their time under them too; on a loaded machine that was most of the 30 s).
  const until = Date.now() + 30_000;
  // A fee estimate may meet the rate limit: the API answers 503 "retry later", and the merchant does.
  let w: any = null;
  const to = elsewhere();
  const refusals: string[] = [];
  while (!w) {
    if (Date.now() > until)
      throw new Error(`no withdrawal was accepted during the rate limits (each a 503): ${refusals.length} tries, the last ${refusals.at(-1)}`);
    w = await f
      .withdraw({ coin_id: f.coin.USDT, amount: '12', to_address: to })
      .catch((err: Error) => (/withdraw: 503/.test(err.message) ? (refusals.push(err.message), null) : Promise.reject(err)));
    // As a merchant told "retry later" does: not at once (the node's Retry-After is 1 s).
    if (!w) await new Promise((r) => setTimeout(r, 1000));
  }
  let maintenance = false;
  while (Date.now() < until) {
    maintenance ||= f.td.daemon.chains.status().some((c) => c.maintenance);
    await new Promise((r) => setTimeout(r, 250));
  }
  t.false(maintenance, 'rate limits are not an outage: the coins stay offered (maintenance_after_seconds)');
  t.true(p.counts.rateLimited > 10, `rate limited ${p.counts.rateLimited} of ${p.counts.requests}`);
  p.set({ rateLimit: null, indexing: false });
  for (const inv of invoices) await f.until(async () => (await f.invoice(inv.id)).status === 'paid', `invoice ${inv.id} paid`, 60_000);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed' || x.status === 'failed', 'withdrawal finished', 60_000);
  t.is(done.status, 'completed', String(done.failure_reason));
  await f.quiet();
  await stop();
  const dropped = await f.td.daemon.store.read.query(`SELECT kind FROM account_sends WHERE status = 'dropped'`);
  t.deepEqual(dropped, [], 'no send read as refused');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
