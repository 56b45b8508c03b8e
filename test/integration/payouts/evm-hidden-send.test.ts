/**
 * A mined send whose lookups by hash the node answers null for (a provider's backend behind the one
 * that served the block, a node that lost its index): its nonce is used, by itself. It is not taken
 * as displaced by another transaction and dropped (its fee then never booked while the chain took
 * it): once the node answers again it is final and booked, and the books match the chain.
 */
import test from 'ava';
import { sendsWithStatus, type EvmSendRow } from '../../../src/chains/evm/payouts/send-store';
import { killAllAnvils } from '../../helpers/anvil';
import { startEvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

test('a mined sweep the node no longer finds by hash is not dropped as displaced: its fee is booked once the node answers again', async (t) => {
  const f = await startEvmPayoutFixture({ provider: {} });
  t.teardown(() => f.stop());
  const store = f.td.daemon.store;
  const provider = f.provider!;
  await f.paidInvoice('ETH', '0.5');
  // Mined at once (automine) but short of its confirmations, and seen by the chain core.
  let sweep: EvmSendRow | undefined;
  await f.until(async () => {
    sweep = (await sendsWithStatus(store.read, f.chainId, ['broadcast'])).find((s) => s.kind === 'sweep' && s.block_height !== null);
    if (!sweep) return false;
    const seen = await store.read.query(`SELECT 1 FROM chain_transfers WHERE txid = '${sweep.txid}' AND direction = 'outgoing'`);
    return seen.length > 0;
  }, 'the sweep mined and seen');

  for (const txid of JSON.parse(sweep!.candidate_txids) as string[]) provider.rules.hidden.add(txid.toLowerCase());
  const asked = () => provider.methods.get('eth_getTransactionByHash') ?? 0;
  const before = asked();
  const statusOf = async () => (await store.read.query(`SELECT status FROM account_sends WHERE id = '${sweep!.id}'`))[0].status as string;
  // The queue asks the node about it (no receipt: reorganised away? displaced?) over several passes.
  await f.until(async () => (await statusOf()) === 'dropped' || asked() >= before + 3, 'the node asked about the hidden sweep', 30_000);
  t.not(await statusOf(), 'dropped', 'not dropped while the chain holds it');

  provider.rules.hidden.clear();
  const stop = f.miner();
  t.teardown(stop);
  await f.until(
    async () => (await sendsWithStatus(store.read, f.chainId, ['mined'])).some((s) => s.id === sweep!.id && s.booked_at !== null),
    'the sweep final and booked',
  );
  await f.quiet();
  await stop();
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test("a mined gas top-up the node no longer finds by hash is not dropped: the chain core does not watch the gas station, the block's body names the top-up at its nonce", async (t) => {
  const f = await startEvmPayoutFixture({ provider: {} });
  t.teardown(() => f.stop());
  const store = f.td.daemon.store;
  const provider = f.provider!;
  await f.paidInvoice('USDT', '25');
  // The token sweep asks the gas station for gas first: the top-up is mined at once (automine), short of its confirmations.
  let topup: EvmSendRow | undefined;
  await f.until(async () => {
    topup = (await sendsWithStatus(store.read, f.chainId, ['broadcast'])).find((s) => s.kind === 'topup' && s.block_height !== null);
    return topup !== undefined;
  }, 'the top-up mined');
  for (const txid of JSON.parse(topup!.candidate_txids) as string[]) provider.rules.hidden.add(txid.toLowerCase());
  const statusOf = async () => (await store.read.query(`SELECT status FROM account_sends WHERE id = '${topup!.id}'`))[0].status as string;
  const counted = () => provider.methods.get('eth_getTransactionCount') ?? 0;
  const before = counted();
  // The queue finds its nonce used (the station's count passed it) with no receipt, and reads whose transaction used it.
  await f.until(async () => (await statusOf()) === 'dropped' || counted() >= before + 6, 'the node asked about the hidden top-up', 30_000);
  t.not(await statusOf(), 'dropped', 'not dropped while the chain holds it');

  provider.rules.hidden.clear();
  const stop = f.miner();
  t.teardown(stop);
  await f.until(async () => (await sendsWithStatus(store.read, f.chainId, ['mined'])).some((s) => s.id === topup!.id), 'the top-up final');
  await f.quiet();
  await stop();
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
