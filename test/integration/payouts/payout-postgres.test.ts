/**
 * Two daemons on one PostgreSQL database, both watching one bcoin node and both running the payout
 * worker: the chain's payout role lets one of them pay; every withdrawal is paid once, in one
 * stored payout, and the books stay true.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import { placeholder, rawQuery } from '../../../src/db/raw';
import { killAllBcoins, sats } from '../../helpers/bcoin';
import { startTestDaemon } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';
import { BTC, CONFIRMATIONS, elsewhere, startPayoutFixture } from '../../helpers/payout-fixture';
import { btcChain } from '../chains/btc/btc-fixture';

test.after.always(killAllBcoins);

test.before(() => {
  // This file's worker only: both daemons read the master key from the environment (they open each other's sealed rows).
  process.env.COINKEEP_MASTER_KEY = randomBytes(32).toString('base64url');
  // And the signer key: each daemon's signer opens the one seed they share.
  process.env.COINKEEP_SIGNER_KEY = randomBytes(32).toString('base64url');
});

test('PostgreSQL, two daemons running the payout worker: each withdrawal is paid once, by one stored payout', async (t) => {
  const url = await tempPostgres(t);
  const f = await startPayoutFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());
  const other = await startTestDaemon({ chains: [btcChain(f.node)], database: { url }, payouts: { batch_window_seconds: 0 } });
  t.teardown(() => other.stop());
  await f.fund('0.2', '0.2', '0.2');
  const start = await f.node.height();

  const dests = [elsewhere(), elsewhere(), elsewhere(), elsewhere()];
  const ws = [];
  for (const [i, to] of dests.entries()) ws.push(await f.withdraw({ coin_id: BTC, amount: `0.0${i + 1}`, to_address: to }));
  for (const w of ws) await f.waitWithdrawal(w.id, (x) => x.status === 'broadcast', 'broadcast');
  await f.node.mine(CONFIRMATIONS);
  for (const w of ws) await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed');

  const em = f.td.daemon.store.read;
  for (const w of ws) {
    const legs = await rawQuery<{ payout_id: string }>(em, `SELECT payout_id FROM chain_payout_legs WHERE withdrawal_id = ${placeholder(em, 1)}`, [w.id]);
    t.is(legs.length, 1);
  }
  const candidates = await rawQuery<{ n: string }>(em, 'SELECT COUNT(*) AS n FROM chain_payout_candidates');
  const payouts = await rawQuery<{ n: string }>(em, "SELECT COUNT(*) AS n FROM chain_payouts WHERE status = 'confirmed'");
  t.is(Number(candidates[0]!.n), Number(payouts[0]!.n), 'no payout signed twice');
  const adapter = new BtcAdapter(f.td.daemon.config.chains[0]!);
  const transfers = (await adapter.blocks(start + 1, await f.node.height())).flatMap((b) => b.transfers);
  t.deepEqual(
    dests.map((d) => transfers.filter((x) => x.to === d).map((x) => x.amount)),
    dests.map((_, i) => [sats(`0.0${i + 1}`)]),
  );
  t.true(await f.ledgerClean());
});
