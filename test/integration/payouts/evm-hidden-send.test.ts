/**
 * A mined send whose lookups by hash the node answers null for (a provider's backend behind the one
 * that served the block, a node that lost its index): its nonce is used, by itself. It is not taken
 * as displaced by another transaction and dropped (its fee then never booked while the chain took
 * it): once the node answers again it is final and booked, and the books match the chain.
 */
import test from 'ava';
import { sendsWithStatus, type EvmSendRow } from '../../../src/chains/evm/payouts/send-store';
import { killAllAnvils } from '../../helpers/anvil';
import { startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

/**
 * A fixture with `ticker` paid, and its first send of `kind` mined at once (automine) but short of
 * its confirmations, meeting `ok` (seen by the chain core, say); then every candidate of it hidden
 * from the node's lookups by hash. Its status is read by `statusOf`.
 */
async function hiddenMinedSend(
  t: { teardown(fn: () => unknown): void },
  ticker: 'ETH' | 'USDT',
  amount: string,
  kind: EvmSendRow['kind'],
  ok: (f: EvmPayoutFixture, send: EvmSendRow) => Promise<boolean> = async () => true,
) {
  const f = await startEvmPayoutFixture({ provider: {} });
  t.teardown(() => f.stop());
  const store = f.td.daemon.store;
  await f.paidInvoice(ticker, amount);
  let send: EvmSendRow | undefined;
  await f.until(async () => {
    send = (await sendsWithStatus(store.read, f.chainId, ['broadcast'])).find((s) => s.kind === kind && s.block_height !== null);
    return send !== undefined && (await ok(f, send));
  }, `the ${kind} mined`);
  for (const txid of JSON.parse(send!.candidate_txids) as string[]) f.provider!.rules.hidden.add(txid.toLowerCase());
  const statusOf = async () => (await store.read.query(`SELECT status FROM account_sends WHERE id = '${send!.id}'`))[0].status as string;
  return { f, store, provider: f.provider!, send: send!, statusOf };
}

test('a mined sweep the node no longer finds by hash is not dropped as displaced: its fee is booked once the node answers again', async (t) => {
  // Mined and seen by the chain core.
  const seen = async (f: EvmPayoutFixture, s: EvmSendRow) =>
    (await f.td.daemon.store.read.query(`SELECT 1 FROM chain_transfers WHERE txid = '${s.txid}' AND direction = 'outgoing'`)).length > 0;
  const { f, store, provider, send: sweep, statusOf } = await hiddenMinedSend(t, 'ETH', '0.5', 'sweep', seen);
  const asked = () => provider.methods.get('eth_getTransactionByHash') ?? 0;
  const before = asked();
  // The queue asks the node about it (no receipt: reorganised away? displaced?) over several passes.
  await f.until(async () => (await statusOf()) === 'dropped' || asked() >= before + 3, 'the node asked about the hidden sweep', 30_000);
  t.not(await statusOf(), 'dropped', 'not dropped while the chain holds it');

  provider.rules.hidden.clear();
  const stop = f.miner();
  t.teardown(stop);
  await f.until(
    async () => (await sendsWithStatus(store.read, f.chainId, ['mined'])).some((s) => s.id === sweep.id && s.booked_at !== null),
    'the sweep final and booked',
  );
  await f.quiet();
  await stop();
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});

test("a mined gas top-up the node no longer finds by hash is not dropped: the chain core does not watch the gas station, the block's body names the top-up at its nonce", async (t) => {
  // The token sweep asks the gas station for gas first.
  const { f, store, provider, send: topup, statusOf } = await hiddenMinedSend(t, 'USDT', '25', 'topup');
  // The queue finds its nonce used (the station's count passed it) with no receipt, and reads the
  // station's count at past blocks to find whose transaction used it (only that search asks at a height).
  const searched = () => provider.methods.get('eth_getTransactionCount@height') ?? 0;
  await f.until(async () => (await statusOf()) === 'dropped' || searched() > 0, 'the queue searched for the hidden top-up', 30_000);
  t.not(await statusOf(), 'dropped', 'not dropped while the chain holds it');

  provider.rules.hidden.clear();
  const stop = f.miner();
  t.teardown(stop);
  await f.until(async () => (await sendsWithStatus(store.read, f.chainId, ['mined'])).some((s) => s.id === topup.id), 'the top-up final');
  await f.quiet();
  await stop();
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
