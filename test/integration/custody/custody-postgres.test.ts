/**
 * Cold storage on PostgreSQL (issue 36 §2): two daemons on one database, both running the
 * forwarding job at once, many times: one forward is made (its payout_id names the run), paid once
 * on chain for exactly its amount, and the books stay true.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { CustodyRuleEntity } from '../../../src/db/entities/custody';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { Amount } from '../../../src/shared/amount';
import { findTransaction, killAllBcoins, sats } from '../../helpers/bcoin';
import { startTestDaemon } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';
import { BTC, elsewhere, paid, reconcile, startPayoutFixture } from '../../helpers/payout-fixture';
import { btcChain } from '../chains/btc/btc-fixture';

test.after.always(killAllBcoins);

test.before(() => {
  // This file's worker only: both daemons read the master key from the environment.
  process.env.COINKEEP_MASTER_KEY = randomBytes(32).toString('base64url');
  // And the signer key: each daemon's signer opens the one seed they share.
  process.env.COINKEEP_SIGNER_KEY = randomBytes(32).toString('base64url');
});

test('PostgreSQL, two daemons running the forwarding job together: one forward, paid once for exactly its amount, keep left', async (t) => {
  t.timeout(180_000);
  const url = await tempPostgres(t);
  const custody = { interval_seconds: 86400 };
  const f = await startPayoutFixture({ overrides: { database: { url }, custody } });
  t.teardown(() => f.stop());
  const other = await startTestDaemon({ chains: [btcChain(f.node)], database: { url }, payouts: { batch_window_seconds: 0 }, custody });
  t.teardown(() => other.stop());
  await f.fund('0.3', '0.2');
  const before = Amount.of((await f.balance()).available);
  const cold = elsewhere();
  const rule = await f.td.daemon.custody.service.set(
    f.accountId,
    { kind: 'member', email: f.owner, otp: f.ownerOtp.next() },
    { coin_id: BTC, address: cold, keep: '0.1' },
  );
  const dayAgo = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
  await f.td.daemon.store.write(async (em) => {
    await em.update(CustodyRuleEntity, { id: rule.id }, { effective_at: dayAgo });
    await em.update(SecurityLogEntity, { account_id: f.accountId }, { created_at: dayAgo });
  });
  const runs = [f.td.daemon, other.daemon].flatMap((d) => [1, 2, 3, 4].map(() => d.custody.service.run()));
  await Promise.all(runs);
  const made = await f.td.daemon.store.read.find(WithdrawalEntity, { where: { account_id: f.accountId } });
  t.is(made.length, 1, 'one forward from both daemons');
  const w = made[0]!;
  t.like(w, { to_address: cold, comment: 'cold storage', payout_id: `cold-storage:${rule.id}:1` });
  t.true(before.minus(Amount.of(w.total_debit)).cmp(Amount.of('0.1')) >= 0, 'keep left after the fees');
  await f.mineUntil(async () => (await f.get(w.id)).status === 'completed', 'the forward completed');
  const tx = await findTransaction(f.node, (await f.get(w.id)).txid);
  t.is(paid(f, tx, cold), sats(w.amount));
  await Promise.all([f.td.daemon.custody.service.run(), other.daemon.custody.service.run()]);
  t.is(await f.td.daemon.store.read.count(WithdrawalEntity, { where: { account_id: f.accountId } }), 1);
  t.true(await f.ledgerClean());
  const rec = await reconcile(f);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
});
