/**
 * A Tron payout whose transaction expires unmined (issue 20 §4): the network holds it back (the
 * stand-in's pool leaves it waiting) until a block at the chain's confirmations is past its
 * expiration; only then is the same payment signed anew, once, so the two can never both be mined.
 * The renewed one mined: the withdrawal completes with its txid, one payment on chain. The renewed
 * one expired too: the withdrawal fails and its hold is released. Books and chain agree after each.
 */
import test from 'ava';
import { CONFIRMATIONS, elsewhere, minedFrom, startTronPayoutFixture, units, type TronPayoutFixture } from './tron-payout-fixture';

/** Seconds a signed transaction may wait: ten stand-in blocks. */
const EXPIRATION_S = 30;

async function funded(): Promise<{ f: TronPayoutFixture; treasury: string }> {
  const f = await startTronPayoutFixture({ options: { tx_expiration_seconds: EXPIRATION_S } });
  await f.paidInvoice('TRX', '200');
  const treasury = await f.treasury();
  await f.until(async () => f.node.trxBalance(treasury) > units('190'), 'the deposit swept');
  await f.quiet();
  return { f, treasury };
}

/** Holds the pool back until the withdrawal's current candidate is out and a block at the confirmations is past its expiration. */
async function expireCurrent(f: TronPayoutFixture, id: string, expectCandidates: number): Promise<string> {
  let w: any;
  await f.until(
    async () =>
      (w = await f.get(id)).status === 'broadcast' && (await f.candidates(id)).length === expectCandidates && w.txid === (await f.candidates(id)).at(-1),
    `candidate ${expectCandidates} broadcast`,
    { mine: false },
  );
  // Block time passes the expiration, and the chain's confirmations pile on the block that did.
  f.node.skipTime((EXPIRATION_S + 3) * 1000);
  f.node.mine(CONFIRMATIONS + 1);
  return w.txid as string;
}

test('a payout whose transaction expired unmined is signed anew once, after the expiry is final; the new one is mined and the withdrawal completed, one payment on chain', async (t) => {
  const { f, treasury } = await funded();
  t.teardown(() => f.stop());
  const to = elsewhere();
  f.node.holdPending(true);
  const w = await f.withdraw({ coin_id: f.coin.TRX, amount: '40', to_address: to });
  const first = await expireCurrent(f, w.id, 1);
  // Renewed only once the first can never be mined.
  await f.until(async () => (await f.candidates(w.id)).length === 2, 'the payout signed anew', { mine: false });
  const renewed = await f.get(w.id);
  t.not(renewed.txid, first);
  t.false(
    f.node.blocks.some((b) => b.transactions?.some((x) => x.txID === first)),
    'the first was never mined',
  );
  f.node.holdPending(false);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'the renewed payout completed');
  t.is(done.txid, renewed.txid);
  t.is(f.node.trxBalance(to), units('40'));
  t.is(minedFrom(f.node, treasury).length, 1, 'one transaction left the treasury');
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});

test('a payout whose renewed transaction expired unmined too is failed and its hold released', async (t) => {
  const { f, treasury } = await funded();
  t.teardown(() => f.stop());
  const before = await f.balance('TRX');
  const to = elsewhere();
  f.node.holdPending(true);
  const w = await f.withdraw({ coin_id: f.coin.TRX, amount: '40', to_address: to });
  await expireCurrent(f, w.id, 1);
  await f.until(async () => (await f.candidates(w.id)).length === 2, 'the payout signed anew', { mine: false });
  await expireCurrent(f, w.id, 2);
  const failed = await f.waitWithdrawal(w.id, (x) => x.status === 'failed', 'the payout failed', { mine: false });
  t.regex(failed.failure_reason, /expired/);
  f.node.holdPending(false);
  f.node.mine(2);
  const after = await f.balance('TRX');
  t.is(after.available, before.available, 'the hold was released');
  t.is(after.hold, '0');
  t.is(f.node.trxBalance(to), 0n);
  t.is(minedFrom(f.node, treasury).length, 0, 'nothing left the treasury');
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});

test('a node answering SERVER_BUSY and the other node-trouble codes to every broadcast never fails a payout: it waits, and is paid once the node takes it', async (t) => {
  const { f, treasury } = await funded();
  t.teardown(() => f.stop());
  const to = elsewhere();
  const codes = ['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION', 'BLOCK_UNSOLIDIFIED'];
  f.node.busy(codes[0]!);
  const w = await f.withdraw({ coin_id: f.coin.TRX, amount: '40', to_address: to });
  await f.until(async () => (await f.get(w.id)).status === 'processing', 'claimed', { mine: false });
  // Each code in turn for a while, blocks going on (before its expiration: nothing proves it dead).
  for (const code of codes) {
    f.node.busy(code);
    const until = Date.now() + 1500;
    await f.until(async () => Date.now() > until, `${code} answered`, { mine: false });
    f.node.mine(1);
    t.is((await f.get(w.id)).status, 'processing', `not failed on ${code}`);
  }
  f.node.busy(null);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');
  t.is(f.node.trxBalance(to), units('40'));
  t.is(minedFrom(f.node, treasury).length, 1, 'one transaction left the treasury');
  t.is((await f.candidates(w.id)).at(-1), done.txid);
  await f.quiet();
  const clean = await f.clean();
  t.true(clean.ok, clean.detail);
});
