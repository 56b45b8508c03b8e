/**
 * The payout worker on bcoin regtest, as a merchant sees it through the API: a withdrawal goes
 * pending → processing → broadcast → completed and its hold is settled; withdrawals of one account
 * within the batch window share one transaction; a transaction the node refuses fails its
 * withdrawal and releases its hold (in a batch, only the bad destination's); a reorganisation of
 * the payout's block takes it back to broadcast and it completes again, paid once; a payout stuck
 * unmined is replaced from the same coins with a higher fee and completes once.
 */
import test from 'ava';
import { Transaction } from 'bitcoinjs-lib';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import type { FeeQuote } from '../../../src/chains/types';
import type { ChainConfig } from '../../../src/config/schema';
import { rawQuery } from '../../../src/db/raw';
import { Amount } from '../../../src/shared/amount';
import { findTransaction, killAllBcoins, sats } from '../../helpers/bcoin';
import {
  BTC,
  candidates,
  CONFIRMATIONS,
  elsewhere,
  events,
  minus,
  paid,
  reconcile,
  startPayoutFixture,
  taproot,
  until,
  type PayoutFixture,
} from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

/** The transaction `txid` from the node's mempool or its blocks. */
const nodeTx = (f: PayoutFixture, txid: string): Promise<Transaction> => findTransaction(f.node, txid);

test('estimate, then withdraw: pending → processing → broadcast → completed; the node pays the destination once, balances, transactions and the ledger agree', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  await f.fund('0.5');
  const before = await f.balance();
  t.is(before.hold, '0');

  const to = elsewhere();
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: BTC, amount: '0.1', to_address: to });
  t.is(est.status, 200);
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  t.is(w.total_debit, est.body.total_debit);

  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  t.regex(sent.txid, /^[0-9a-f]{64}$/);
  await until(async () => (await f.node.mempool()).includes(sent.txid), 'the payout in the mempool');
  t.is(paid(f, await nodeTx(f, sent.txid), to), sats('0.1'));
  t.like(await f.balance(), { available: minus(before.available, w.total_debit), hold: w.total_debit });

  await f.node.mine(CONFIRMATIONS);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.like(done, { txid: sent.txid, network_fee_charged: w.network_fee_reserved, failure_reason: null });
  t.true(done.confirmations >= CONFIRMATIONS);
  t.truthy(done.completed_at);
  t.deepEqual(await f.balance(), { available: minus(before.available, w.total_debit), hold: '0' });

  const txs = (await f.api.get(`/v1/transactions?type=withdrawal`)).body.items;
  t.is(txs.length, 1);
  t.like(txs[0], { withdrawal_id: w.id, status: 'confirmed', txid: sent.txid, amount: '0.1' });
  t.true(txs[0].confirmations >= CONFIRMATIONS);
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.completed']);
  t.deepEqual(await candidates(f, w.id), [sent.txid]);
  t.true(await f.ledgerClean());
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
});

test('three withdrawals within the batch window go out in one transaction (one output each, one change); in actual mode the unused fee reserve comes back', async (t) => {
  const f = await startPayoutFixture({ payouts: { batch_window_seconds: 600 } });
  t.teardown(() => f.stop());
  await f.fund('0.3', '0.3');
  const before = await f.balance();
  const dests = [elsewhere(), elsewhere(), elsewhere()];
  const ws = [];
  ws.push(await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: dests[0] }));
  ws.push(await f.withdraw({ coin_id: BTC, amount: '0.2', to_address: dests[1] }));
  ws.push(await f.withdraw({ coin_id: BTC, amount: '0.15', to_address: dests[2], network_fee_mode: 'actual' }));
  t.deepEqual(
    (await Promise.all(ws.map((w) => f.get(w.id)))).map((w) => w.status),
    ['pending', 'pending', 'pending'],
    'waiting for the window',
  );
  await f.backdatePending(601);

  const sent = [];
  for (const w of ws) sent.push(await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast'));
  t.is(new Set(sent.map((s) => s.txid)).size, 1, 'one transaction');
  const tx = await nodeTx(f, sent[0].txid);
  t.is(tx.outs.length, 4, 'three payments and a change');
  t.deepEqual(
    dests.map((d) => paid(f, tx, d)),
    [sats('0.1'), sats('0.2'), sats('0.15')],
  );

  await f.node.mine(CONFIRMATIONS);
  const done = [];
  for (const w of ws) done.push(await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed'));
  t.is(done[0].network_fee_charged, ws[0].network_fee_reserved);
  const charged = Amount.of(done[2].network_fee_charged);
  t.true(
    charged.isPositive() && charged.cmp(Amount.of(ws[2].network_fee_reserved)) < 0,
    `actual fee ${done[2].network_fee_charged} under the reserve ${ws[2].network_fee_reserved}`,
  );
  // Each paid its amount, its platform fee and the network fee charged.
  const taken = done.map((d) => Amount.of(d.amount).plus(Amount.of(d.platform_fee)).plus(Amount.of(d.network_fee_charged)).toString());
  t.deepEqual(await f.balance(), { available: minus(before.available, ...taken), hold: '0' });
  t.true(await f.ledgerClean());
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
});

/** Bitcoin Core's refusal of a payment to a witness v1 output under a policy that does not relay it (bcoin itself relays without answering). */
const refuseTaproot = (tx: Transaction) => (tx.outs.some((o) => o.script[0] === 0x51 && o.script[1] === 0x20) ? { code: -26, message: 'scriptpubkey' } : null);

test('the node refuses the transaction: failed with failure_reason, hold released, nothing on the node; the coins pay the next withdrawal', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  f.proxy.refuse(refuseTaproot);
  await f.fund('0.2');
  const before = await f.balance();
  const bad = await f.withdraw({ coin_id: BTC, amount: '0.05', to_address: taproot() });
  const failed = await f.waitWithdrawal(bad.id, (x) => x.status === 'failed', 'failed');
  t.is(failed.failure_reason, 'the node refused the transaction');
  t.is(failed.txid, null);
  t.deepEqual(await f.balance(), before);
  t.deepEqual(await f.node.mempool(), []);
  t.deepEqual(await events(f, bad.id), ['withdrawal.processing', 'withdrawal.failed']);
  const txs = (await f.api.get(`/v1/transactions?type=withdrawal`)).body.items;
  t.like(txs[0], { withdrawal_id: bad.id, status: 'reverted' });

  const good = await f.withdraw({ coin_id: BTC, amount: '0.15', to_address: elsewhere() });
  await f.waitWithdrawal(good.id, (x) => x.status === 'broadcast', 'broadcast');
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(good.id, (x) => x.status === 'completed', 'completed');
  t.true(await f.ledgerClean());
});

test('a batch the node refuses for one bad destination: that withdrawal fails alone, the other two are paid', async (t) => {
  const f = await startPayoutFixture({ payouts: { batch_window_seconds: 600 } });
  t.teardown(() => f.stop());
  f.proxy.refuse(refuseTaproot);
  await f.fund('0.2', '0.2', '0.2');
  const before = await f.balance();
  const a = await f.withdraw({ coin_id: BTC, amount: '0.05', to_address: elsewhere() });
  const bad = await f.withdraw({ coin_id: BTC, amount: '0.06', to_address: taproot() });
  const b = await f.withdraw({ coin_id: BTC, amount: '0.07', to_address: elsewhere() });
  await f.backdatePending(601);

  const failed = await f.waitWithdrawal(bad.id, (x) => x.status === 'failed', 'failed');
  t.is(failed.failure_reason, 'the node refused the transaction');
  const given = await rawQuery<{ failure_reason: string }>(
    f.td.daemon.store.read,
    "SELECT failure_reason FROM chain_payouts WHERE status = 'failed' ORDER BY created_at",
  );
  t.deepEqual(
    given.map((p) => p.failure_reason),
    ['the node refused the transaction; its withdrawals go out one by one', 'the node refused the transaction'],
    'the batch, then the bad one alone',
  );
  for (const w of [a, b]) await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  await f.node.mine(CONFIRMATIONS);
  for (const w of [a, b]) await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.deepEqual(await f.balance(), { available: minus(before.available, a.total_debit, b.total_debit), hold: '0' });
  t.true(await f.ledgerClean());
});

test('a reorganisation drops the block of a completed payout: back to broadcast, the same transaction is mined again and completes; paid and settled once', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  await f.fund('0.5');
  const before = await f.balance();
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  await until(async () => (await f.node.mempool()).includes(sent.txid), 'the payout in the mempool');
  const [block] = await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  const settled = await f.balance();
  t.deepEqual(settled, { available: minus(before.available, w.total_debit), hold: '0' });

  // bcoin drops the block's transactions; the chain core sees the longer branch without it.
  await f.node.invalidateBlock(block!);
  await f.node.mine(CONFIRMATIONS + 1);
  const back = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'back to broadcast');
  t.is(back.txid, sent.txid);
  t.deepEqual(await f.balance(), settled, 'settled money stays settled');
  // The worker hands the same bytes to the node again.
  await until(async () => (await f.node.mempool()).includes(sent.txid), 'the payout in the mempool again');
  await f.node.mine(CONFIRMATIONS);
  const again = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed again');
  t.is(again.txid, sent.txid);
  t.deepEqual(await f.balance(), settled);
  t.deepEqual(await candidates(f, w.id), [sent.txid], 'never signed again');
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.completed', 'withdrawal.broadcast', 'withdrawal.completed']);
  t.true(await f.ledgerClean());
});

/**
 * A node that says it holds the first payout it is handed without ever taking it in, as a node
 * whose miners leave a low-fee transaction out would, and whose fee estimate then rises: bcoin
 * 1.0.2 refuses any double spend of its mempool, so the stuck payout stays outside it and only the
 * replacement reaches bcoin.
 */
class StuckFirst extends BtcAdapter {
  stuck: string | null = null;
  constructor(chain: ChainConfig) {
    super(chain);
  }
  override async feeQuote(signal?: AbortSignal): Promise<FeeQuote> {
    const quote = await super.feeQuote(signal);
    return this.stuck !== null && quote.kind === 'btc' ? { ...quote, satPerVbyte: quote.satPerVbyte * 2 } : quote;
  }
  override async broadcast(rawHex: string, signal?: AbortSignal): Promise<string> {
    const txid = Transaction.fromHex(rawHex).getId();
    this.stuck ??= txid;
    return txid === this.stuck ? txid : super.broadcast(rawHex, signal);
  }
}

test("a payout not mined after its chain's replace_after_blocks while the node asks more is replaced (BIP125) from the same coins at the higher rate; the replacement completes it once and the first is conflicted", async (t) => {
  let node!: StuckFirst;
  // The chain's own wait decides, not the global one.
  const f = await startPayoutFixture({
    payouts: { replace_after_blocks: 1000 },
    chain: { payouts: { replace_after_blocks: 2 } },
    adapter: (chain) => (node = new StuckFirst(chain)),
  });
  t.teardown(() => f.stop());
  await f.fund('0.5');
  const before = await f.balance();
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: BTC, amount: '0.1', to_address: to });
  const first = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  t.is(first.txid, node.stuck);

  await f.mineUntil(async () => (await candidates(f, w.id)).length === 2, 'a replacement');
  const [stuck, replacement] = await candidates(f, w.id);
  t.is(stuck, first.txid);
  await f.mineUntil(async () => (await f.get(w.id)).status === 'completed', 'completed');
  const done = await f.get(w.id);
  t.is(done.txid, replacement);
  t.is(paid(f, await nodeTx(f, replacement!), to), sats('0.1'));
  const raw = (await rawQuery<{ data: string; fee: string }>(f.td.daemon.store.read, 'SELECT data, fee FROM chain_payout_candidates ORDER BY seq')).map(
    (r) => ({ ...JSON.parse(r.data), fee: BigInt(r.fee) }),
  );
  t.deepEqual(raw[1].inputs, raw[0].inputs, 'the same coins: the first can never be mined now');
  t.true(raw[1].fee > raw[0].fee, 'a higher fee');
  t.is(raw[1].satPerVbyte, raw[0].satPerVbyte * 2, "at the node's rate now");
  t.deepEqual(await f.balance(), { available: minus(before.available, w.total_debit), hold: '0' });
  t.deepEqual(await events(f, w.id), ['withdrawal.processing', 'withdrawal.broadcast', 'withdrawal.completed']);
  t.true(await f.ledgerClean());
});
