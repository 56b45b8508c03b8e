/**
 * Every Bitcoin withdrawal completes or says why (issue 29 §3, PRODUCT §14), on bcoin regtest
 * through the API: `amount: "max"` is the whole available balance less the fee of the coins its
 * payout spends, and that payout completes with no change, leaving nothing available or held and
 * the books equal to the chain; a payout takes no more for its fee than its withdrawal reserved;
 * a withdrawal the account's coins cannot fund fails with what is missing and blocks nobody; one
 * account's thousand waiting withdrawals do not hold up another's; a payout whose handling throws
 * is logged and the chain's other payouts go on.
 */
import test from 'ava';
import { Transaction } from 'bitcoinjs-lib';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import type { FeeQuote } from '../../../src/chains/types';
import type { ChainConfig } from '../../../src/config/schema';
import { placeholder, rawQuery } from '../../../src/db/raw';
import { createLogger } from '../../../src/shared/logger';
import { Amount } from '../../../src/shared/amount';
import { killAllBcoins } from '../../helpers/bcoin';
import { ledgerReconcile } from '../../helpers/daemon';
import { recordTransaction } from '../../helpers/money-fixtures';
import { BTC, CONFIRMATIONS, elsewhere, startPayoutFixture, until, type PayoutFixture } from '../../helpers/payout-fixture';

test.after.always(killAllBcoins);

/** P2WPKH sizes (vbytes): a transaction's overhead, one payment output, one input. */
const OVERHEAD = 15;
const OUTPUT = 31;
const INPUT = 68;

/** Limits loose enough for a thousand withdrawals of one key in a test. */
const LOOSE = { max: 1_000_000, windowMs: 60_000 };
const LOOSE_LIMITS = { key: LOOSE, merchant: LOOSE, account: LOOSE, person: LOOSE, ip: LOOSE };

/** A node whose fee quote the test sets. */
class QuotedRate extends BtcAdapter {
  constructor(
    chain: ChainConfig,
    public satPerVbyte: number,
  ) {
    super(chain);
  }
  override async feeQuote(): Promise<FeeQuote> {
    return { kind: 'btc', satPerVbyte: this.satPerVbyte, source: 'node' };
  }
}

const sat = (btc: string): bigint => Amount.of(btc).toBaseUnits(8);

/** The stored candidates of a withdrawal's payout: txid, fee and the rate it was signed at. */
async function candidatesOf(f: PayoutFixture, withdrawalId: string): Promise<Array<{ txid: string; fee: bigint; satPerVbyte: number; inputs: number }>> {
  const em = f.td.daemon.store.read;
  const rows = await rawQuery<{ txid: string; fee: string; data: string }>(
    em,
    `SELECT k.txid, k.fee, k.data FROM chain_payout_candidates k JOIN chain_payout_legs l ON l.payout_id = k.payout_id WHERE l.withdrawal_id = ${placeholder(em, 1)} ORDER BY k.seq`,
    [withdrawalId],
  );
  return rows.map((r) => {
    const data = JSON.parse(r.data) as { satPerVbyte: number; inputs: unknown[] };
    return { txid: r.txid, fee: BigInt(r.fee), satPerVbyte: data.satPerVbyte, inputs: data.inputs.length };
  });
}

async function estimateMax(f: PayoutFixture, to: string) {
  const est = await f.api.post('/v1/withdrawals/estimate', { coin_id: BTC, amount: 'max', to_address: to });
  if (est.status !== 200) throw new Error(`estimate: ${est.status} ${JSON.stringify(est.body)}`);
  return est.body;
}

/** Withdraws everything to `to`, mines it to completion, and checks what a merchant and an operator see after. */
async function withdrawAllCompletes(t: import('ava').ExecutionContext, f: PayoutFixture, coins: number, beforeMined?: () => Promise<void>) {
  const { available } = await f.balance();
  const to = elsewhere();
  const est = await estimateMax(f, to);
  t.is(est.total_debit, available, 'the whole available balance');
  t.is(Amount.of(est.amount).plus(Amount.of(est.network_fee_reserved)).toString(), available);
  const w = await f.withdraw({ coin_id: BTC, amount: est.amount, to_address: to });
  t.like(w, { total_debit: available, network_fee_reserved: est.network_fee_reserved });
  await beforeMined?.();
  const sent = await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  await until(async () => (await f.node.mempool()).includes(sent.txid), 'the payout in the mempool');
  const tx = Transaction.fromHex(await f.node.rpc.call<string>('getrawtransaction', [sent.txid, false]));
  t.is(tx.ins.length, coins, 'every coin of the account spent');
  t.is(tx.outs.length, 1, 'no change output');
  t.is(BigInt(tx.outs[0]!.value), sat(est.amount));
  const [candidate] = await candidatesOf(f, w.id);
  t.is(candidate!.fee, sat(est.network_fee_reserved), 'the fee is what was reserved');
  t.is(candidate!.fee, BigInt((OVERHEAD + OUTPUT + coins * INPUT) * candidate!.satPerVbyte), 'the fee of exactly those coins');

  await f.node.mine(CONFIRMATIONS);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.is(done.network_fee_charged, est.network_fee_reserved);
  t.deepEqual(await f.balance(), { available: '0', hold: '0' });
  t.true(await f.ledgerClean());
  const rec = await ledgerReconcile(f.td);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
  return candidate!;
}

test('withdraw everything: the estimate of amount "max" is the available balance less the fee of every coin its payout spends; the payout has no change, completes, leaves 0 available and 0 held, and ledger reconcile is clean', async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  // Four coins: 15 + 31 + 4 × 68 = 318 vbytes, more than the 250 a fixed reserve would cover.
  await f.fund('0.01', '0.02', '0.03', '0.04');
  await withdrawAllCompletes(t, f, 4);
});

test("a payout never takes more for its fee than its withdrawal reserved: the node's rate rose after the withdraw-all was created, and it goes out at the rate its reserve pays and completes", async (t) => {
  let node!: QuotedRate;
  const f = await startPayoutFixture({ payouts: { batch_window_seconds: 600 }, adapter: (chain) => (node = new QuotedRate(chain, 2)) });
  t.teardown(() => f.stop());
  await f.fund('0.01', '0.02', '0.03');
  const candidate = await withdrawAllCompletes(t, f, 3, async () => {
    // Waiting for the batch window when the market moves: the payout is built at 10 sat/vB now.
    node.satPerVbyte = 10;
    await f.backdatePending(601);
  });
  t.is(candidate.satPerVbyte, 2, "the rate the reserve pays, not the node's 10");
});

test("a withdrawal the account's coins cannot fund fails with what is missing, its hold released; the account's later withdrawal is paid", async (t) => {
  const f = await startPayoutFixture();
  t.teardown(() => f.stop());
  await f.fund('0.01');
  // The books hold more than the account's coins on chain.
  await recordTransaction(f.td.daemon.store, { accountId: f.accountId, coinId: BTC, type: 'deposit', amount: '0.05' });
  const before = await f.balance();
  const big = await f.withdraw({ coin_id: BTC, amount: '0.03', to_address: elsewhere() });
  const small = await f.withdraw({ coin_id: BTC, amount: '0.005', to_address: elsewhere() });

  const failed = await f.waitWithdrawal(big.id, (x) => x.status === 'failed', 'failed');
  // Spending its one coin of 0.01 for 0.03 and the fee it reserved: 0.02 and that fee are missing.
  const missing = Amount.of('0.02').plus(Amount.of(big.network_fee_reserved)).toString();
  t.is(failed.failure_reason, `cannot be funded on chain: the account's coins there are ${missing} BTC short of what its payout needs`);
  t.is(failed.txid, null);
  const sent = await f.waitWithdrawal(small.id, (x) => x.status === 'broadcast', 'the later one broadcast');
  await f.node.mine(CONFIRMATIONS);
  await f.waitWithdrawal(small.id, (x) => x.status === 'completed', 'the later one completed');
  t.truthy(sent.txid);
  t.deepEqual(
    await f.balance(),
    { available: Amount.of(before.available).minus(Amount.of(small.total_debit)).toString(), hold: '0' },
    "the failed one's hold released",
  );
  const txs = (await f.api.get('/v1/transactions?type=withdrawal')).body.items;
  t.like(
    txs.find((x: { withdrawal_id: string }) => x.withdrawal_id === big.id),
    { status: 'reverted' },
  );
  t.true(await f.ledgerClean());
});

test("one account with a thousand withdrawals waiting does not hold up another: the other account's withdrawal is claimed and sent while all of the first's still wait", async (t) => {
  const f = await startPayoutFixture({ daemon: { sensitiveLimits: LOOSE_LIMITS } });
  t.teardown(() => f.stop());
  const other = await f.anotherMerchant();
  await other.fund('0.01');
  await f.fund('0.01');
  // The first account's coin is on its way out (not mined): its change may come back, so what its coins cannot pay now waits.
  const out = await f.withdraw({ coin_id: BTC, amount: '0.005', to_address: elsewhere() });
  await f.waitWithdrawal(out.id, (x) => x.status === 'broadcast', "the first account's payout broadcast");
  await recordTransaction(f.td.daemon.store, { accountId: f.accountId, coinId: BTC, type: 'deposit', amount: '2' });
  const many = 1001;
  for (let i = 0; i < many; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, many - i) }, () => f.withdraw({ coin_id: BTC, amount: '0.001', to_address: elsewhere() })));
  }
  const pendingOfFirst = async () =>
    Number(
      (
        await rawQuery<{ n: number }>(
          f.td.daemon.store.read,
          `SELECT COUNT(*) AS n FROM withdrawals WHERE account_id = '${f.accountId}' AND status = 'pending'`,
        )
      )[0]!.n,
    );
  t.is(await pendingOfFirst(), many);

  const res = await other.api.post('/v1/withdrawals', { coin_id: BTC, amount: '0.005', to_address: elsewhere() });
  t.is(res.status, 201);
  let last: any;
  await until(
    async () => (last = (await other.api.get(`/v1/withdrawals/${res.body.id}`)).body).status === 'broadcast',
    () => `the other account's withdrawal broadcast: ${JSON.stringify(last)}`,
  );
  t.is(await pendingOfFirst(), many, "the first account's still wait");
  await f.node.mine(CONFIRMATIONS);
  await until(async () => (await other.api.get(`/v1/withdrawals/${res.body.id}`)).body.status === 'completed', "the other account's withdrawal completed");
});

test("a withdrawal whose failure handling throws is logged, and the chain's other accounts are paid all the same", async (t) => {
  const lines: string[] = [];
  const f = await startPayoutFixture({ daemon: { logger: createLogger({ write: (line) => void lines.push(line) }) } });
  t.teardown(() => f.stop());
  const other = await f.anotherMerchant();
  await other.fund('0.01');
  // No coins behind it, and its hold gone from under it: failing it throws.
  await recordTransaction(f.td.daemon.store, { accountId: f.accountId, coinId: BTC, type: 'deposit', amount: '0.05' });
  const broken = await f.withdraw({ coin_id: BTC, amount: '0.03', to_address: elsewhere() });
  await f.td.daemon.store.write((em) => em.query(`UPDATE transactions SET status = 'reverted' WHERE withdrawal_id = '${broken.id}'`));

  const res = await other.api.post('/v1/withdrawals', { coin_id: BTC, amount: '0.005', to_address: elsewhere() });
  t.is(res.status, 201);
  await until(async () => (await other.api.get(`/v1/withdrawals/${res.body.id}`)).body.status === 'broadcast', "the other account's withdrawal broadcast");
  const failures = () => lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error' && l.withdrawal_id === broken.id);
  await until(() => failures().length > 0, 'the failure is logged');
  const logged = failures();
  t.regex(logged[0].error, /no pending hold/);
  t.is((await f.get(broken.id)).status, 'pending', 'its failure rolled back whole');
});

test("a stored payout whose handling throws is logged, and the chain's other payouts and accounts go on", async (t) => {
  const lines: string[] = [];
  const f = await startPayoutFixture({ daemon: { logger: createLogger({ write: (line) => void lines.push(line) }) } });
  t.teardown(() => f.stop());
  const other = await f.anotherMerchant();
  await other.fund('0.01');
  await f.fund('0.01');
  const first = await f.withdraw({ coin_id: BTC, amount: '0.005', to_address: elsewhere() });
  await f.waitWithdrawal(first.id, (x) => x.status === 'broadcast', 'broadcast');
  // Its stored bytes no longer open: every run that carries it on throws.
  const [{ payout_id }] = await rawQuery<{ payout_id: string }>(
    f.td.daemon.store.read,
    `SELECT payout_id FROM chain_payout_legs WHERE withdrawal_id = '${first.id}'`,
  );
  await f.td.daemon.store.write((em) => em.query(`UPDATE chain_payout_candidates SET raw_sealed = 'broken' WHERE payout_id = '${payout_id}'`));

  const res = await other.api.post('/v1/withdrawals', { coin_id: BTC, amount: '0.005', to_address: elsewhere() });
  t.is(res.status, 201);
  await until(async () => (await other.api.get(`/v1/withdrawals/${res.body.id}`)).body.status === 'broadcast', "the other account's withdrawal broadcast");
  // The two are handled in separate runs of the worker: the other's broadcast may come first.
  await until(() => lines.some((l) => l.includes('"level":"error"') && l.includes(payout_id)), 'the failure is logged');
});
