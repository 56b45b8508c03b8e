/**
 * Sweeps on a real anvil (issue 19 §1): credited deposits move into the account's treasury, ETH as
 * the balance less the gas, USDT after the gas station topped the deposit address up with the gas
 * the transfer needs; the cost is booked to the operator's network book; invoices are untouched;
 * the books hold what the chain shows.
 */
import test from 'ava';
import { AddressEntity } from '../../../src/db/entities/chain';
import { LedgerEntryEntity } from '../../../src/db/entities/money';
import { NETWORK_BOOK } from '../../../src/ledger/ledger';
import type { EvmChainPayouts } from '../../../src/chains/evm/payouts/evm-chain-payouts';
import { sendsWithStatus } from '../../../src/chains/evm/payouts/send-store';
import { createLogger } from '../../../src/shared/logger';
import { killAllAnvils } from '../../helpers/anvil';
import { eth, startEvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

test('credited ETH and USDT deposits are swept into the account treasury; the gas is booked to the network book and the books match the chain', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const ethInvoice = await f.paidInvoice('ETH', '0.5');
  const usdtInvoice = await f.paidInvoice('USDT', '100');
  const stop = f.miner();
  t.teardown(stop);

  const store = f.td.daemon.store;
  await f.until(async () => (await store.read.findOneBy(AddressEntity, { account_id: f.accountId, purpose: 'treasury' })) !== null, 'a treasury');
  const treasury = await store.read.findOneByOrFail(AddressEntity, { account_id: f.accountId, purpose: 'treasury' });
  t.regex(treasury.derivation_path, /^m\/44'\/60'\/\d+'\/1\/0$/, 'index 0 of the internal chain of the account');
  await f.until(async () => (await f.onChain(treasury.address, 'USDT')) === 100_000_000n && (await f.onChain(treasury.address, 'ETH')) > 0n, 'both swept');
  await f.until(async () => (await sendsWithStatus(store.read, f.chainId, ['signed', 'broadcast'])).length === 0, 'every send final');
  await stop();

  t.is(await f.onChain(usdtInvoice.address, 'USDT'), 0n);
  const left = await f.onChain(ethInvoice.address, 'ETH');
  const inTreasury = await f.onChain(treasury.address, 'ETH');
  t.true(inTreasury < eth('0.5') && inTreasury > eth('0.49'), `the ETH less the gas: ${inTreasury}`);
  t.true(left < eth('0.0001'), `at most the unused gas reserve stays behind: ${left}`);
  const mined = await sendsWithStatus(store.read, f.chainId, ['mined']);
  t.deepEqual(mined.map((s) => s.kind).sort(), ['sweep', 'sweep', 'topup']);
  t.true(mined.every((s) => s.succeeded === 1 && s.booked_at !== null));
  const topUp = mined.find((s) => s.kind === 'topup')!;
  t.is(topUp.from_address, f.gasStation);
  t.is(topUp.to_address, usdtInvoice.address);

  // The invoices and the merchant's balances are as the payments left them.
  t.like(await f.invoice(usdtInvoice.id), { status: 'paid', paid_amount: '100' });
  t.like(await f.invoice(ethInvoice.id), { status: 'paid', paid_amount: '0.5' });
  t.is((await f.balance('ETH')).available, '0.5');
  t.is((await f.balance('USDT')).available, '100');
  t.is((await f.transactions(`invoice_id=${usdtInvoice.id}`)).length, 1, 'no transaction row for the top-up or the sweep');
  const network = await store.read.findBy(LedgerEntryEntity, { credit_book: NETWORK_BOOK });
  t.true(network.some((e) => e.code === 'gas_topup'));
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('an empty gas station: the token sweep waits, coinkeep status warns with what the next sweeps need; once funded the sweep goes out and the warning clears', async (t) => {
  const f = await startEvmPayoutFixture({ gasStationEth: '0' });
  t.teardown(() => f.stop());
  const inv = await f.paidInvoice('USDT', '20');
  const stop = f.miner();
  t.teardown(stop);
  const station = () => f.td.daemon.evmPayouts.gasStations()[0]!;
  await f.until(async () => station().warning !== null, 'a warning');
  t.like(station(), { address: f.gasStation, balance: '0' });
  t.true(Number(station().needed) > 0);
  t.regex(station().warning!, /fund 0x/);
  const store = f.td.daemon.store;
  t.is(Number((await store.read.query(`SELECT COUNT(*) AS n FROM account_sends`))[0].n), 0, 'no top-up it cannot pay, no sweep');

  await f.pay(f.gasStation, 'ETH', '1');
  await f.until(async () => (await f.onChain(inv.address, 'USDT')) === 0n, 'swept');
  await f.until(async () => station().warning === null, 'the warning cleared');
  await f.quiet();
  await stop();
  t.is((await f.balance('USDT')).available, '20');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('a pass stopped after its top-up went out, before its token sweep was signed: the address waits while its top-up is on its way, then is swept with the gas it holds; one top-up, the deposit swept once', async (t) => {
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const payouts = f.td.daemon.evmPayouts.byChain.get(f.chainId) as EvmChainPayouts;
  const { queue, sweeper } = payouts;
  // The stop: the token sweep that waits for the top-up is never signed, as with a daemon killed
  // there. The node holds the top-up in its pool meanwhile (no automatic mining), so the passes
  // that follow see the address without its gas.
  const signBatch = queue.signBatch.bind(queue);
  let stopped = 0;
  queue.signBatch = async (em, reqs, nodePending) => {
    if (reqs.some((r) => r.kind === 'topup')) await f.node.rpc('evm_setAutomine', [false]);
    if (stopped === 0 && reqs.some((r) => r.kind === 'sweep' && r.afterId !== null && r.afterId !== undefined)) {
      stopped++;
      throw new Error('the daemon stopped here');
    }
    return signBatch(em, reqs, nodePending);
  };
  const plan = sweeper.plan.bind(sweeper);
  let passes = 0;
  sweeper.plan = (signal) => {
    if (stopped > 0) passes++;
    return plan(signal);
  };
  const paid = await f.paidInvoice('USDT', '30');
  await f.until(async () => passes >= 5, 'five passes after the stop');
  const store = f.td.daemon.store;
  const all = () => sendsWithStatus(store.read, f.chainId, ['signed', 'broadcast', 'mined', 'dropped']);
  t.deepEqual(
    (await all()).map((s) => `${s.kind} ${s.status}`),
    ['topup broadcast'],
    'no second top-up while the first is on its way',
  );

  await f.node.rpc('evm_setAutomine', [true]);
  const stop = f.miner();
  t.teardown(stop);
  await f.until(async () => (await f.onChain(paid.address, 'USDT')) === 0n, 'swept');
  await f.quiet();
  await stop();
  t.is(stopped, 1);
  const sends = await all();
  t.is(sends.filter((s) => s.kind === 'topup' && s.to_address === paid.address).length, 1, 'one top-up');
  const sweeps = sends.filter((s) => s.kind === 'sweep' && s.from_address === paid.address);
  t.is(sweeps.length, 1, 'one sweep');
  t.is(sweeps[0]!.after_id, null, 'signed after the stop, it pays with the gas its address holds');
  t.true(sends.every((s) => s.status === 'mined' && s.succeeded === 1));
  t.is((await f.balance('USDT')).available, '30');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test('a deposit not worth sweeping yet is left alone quietly: the passes that sign nothing say so at debug level, never at info', async (t) => {
  const lines: Array<{ level: string; msg: string; sweeps?: number }> = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) });
  const f = await startEvmPayoutFixture({ daemon: { logger } });
  t.teardown(() => f.stop());
  // Less than twice a transfer's gas: moving it would cost more than it brings.
  await f.paidInvoice('ETH', '0.00001');
  await f.until(async () => lines.filter((l) => l.msg.startsWith('evm sweeps')).length >= 5, 'several sweep passes over the due deposit');
  t.deepEqual(
    lines.filter((l) => l.level === 'info' && l.msg.startsWith('evm sweeps')),
    [],
  );
  t.is((await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep'`))[0].n, 0, 'nothing swept');
});
