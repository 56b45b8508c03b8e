/**
 * Cold storage on anvil (PRODUCT §18, issue 36 §2): an account's ETH and USDT above `keep` are
 * forwarded to its cold address once, however many runs race, as ordinary withdrawals paid by the
 * payout worker; the cold address receives exactly the amount; `keep` is left available after the
 * fees; a frozen account forwards nothing; the books equal the chain and ledger reconcile is clean.
 */
import test from 'ava';
import { CustodyRuleEntity } from '../../../src/db/entities/custody';
import { SecurityLogEntity } from '../../../src/db/entities/team';
import { WithdrawalEntity } from '../../../src/db/entities/withdrawals';
import { Amount } from '../../../src/shared/amount';
import { killAllAnvils } from '../../helpers/anvil';
import { ledgerReconcile } from '../../helpers/daemon';
import { elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from '../payouts/evm-payout-fixture';

test.after.always(killAllAnvils);

const DAY_AGO = () => new Date(Date.now() - 25 * 3600 * 1000).toISOString();

async function forwards(f: EvmPayoutFixture, coinId: string) {
  return f.td.daemon.store.read.find(WithdrawalEntity, {
    where: { account_id: f.accountId, coin_id: coinId, comment: 'cold storage' },
    order: { created_at: 'ASC' },
  });
}

async function pastWindow(f: EvmPayoutFixture): Promise<void> {
  await f.td.daemon.store.write(async (em) => {
    await em.update(CustodyRuleEntity, { account_id: f.accountId }, { effective_at: DAY_AGO() });
    await em.update(SecurityLogEntity, { account_id: f.accountId }, { created_at: DAY_AGO() });
  });
}

test('ETH and USDT above keep are forwarded once each, paid on chain for exactly their amounts, keep left after the fees; frozen, nothing is forwarded; the books equal the chain', async (t) => {
  t.timeout(240_000);
  const f = await startEvmPayoutFixture();
  t.teardown(() => f.stop());
  const custody = f.td.daemon.custody.service;
  const run = () => custody.run();
  await f.paidAndSwept('ETH', '1');
  await f.paidAndSwept('USDT', '100');
  const coldEth = elsewhere();
  const coldUsdt = elsewhere();
  // The owner's codes: three a 30 s step, one spent on the key's grant.
  const owner = () => ({ kind: 'member' as const, email: f.owner, otp: f.otp.next() });
  await custody.set(f.accountId, owner(), { coin_id: f.coin.ETH, address: coldEth, keep: '0.4' });
  await custody.set(f.accountId, owner(), { coin_id: f.coin.USDT, address: coldUsdt, keep: '30' });
  await run();
  t.is((await forwards(f, f.coin.ETH)).length + (await forwards(f, f.coin.USDT)).length, 0, 'not inside the window');

  // Frozen: nothing, however long past the window.
  await pastWindow(f);
  await f.td.daemon.team.freeze(f.accountId, { kind: 'member', email: f.owner });
  await Promise.all([run(), run()]);
  t.is((await forwards(f, f.coin.ETH)).length + (await forwards(f, f.coin.USDT)).length, 0, 'a frozen account forwards nothing');
  await f.td.daemon.team.unfreeze(f.accountId);

  const before = { ETH: Amount.of((await f.balance('ETH')).available), USDT: Amount.of((await f.balance('USDT')).available) };
  await Promise.all([run(), run(), run(), run()]);
  const stop = f.miner();
  t.teardown(stop);
  for (const [ticker, cold, keep] of [
    ['ETH', coldEth, '0.4'],
    ['USDT', coldUsdt, '30'],
  ] as const) {
    const made = await forwards(f, f.coin[ticker]);
    t.is(made.length, 1, `${ticker}: one forward`);
    const w = made[0]!;
    t.like(w, { to_address: cold, comment: 'cold storage' });
    t.true(before[ticker].minus(Amount.of(w.total_debit)).cmp(Amount.of(keep)) >= 0, `${ticker}: keep left after the fees`);
    const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', `${ticker} forward completed`, 90_000);
    t.is(await f.onChain(cold, ticker), ticker === 'ETH' ? eth(done.amount) : Amount.of(done.amount).toBaseUnits(6), `${ticker}: exactly the amount on chain`);
  }
  await f.quiet();
  await stop();
  await Promise.all([run(), run()]);
  t.is((await forwards(f, f.coin.ETH)).length, 1, 'ETH: nothing more');
  t.is((await forwards(f, f.coin.USDT)).length, 1, 'USDT: nothing more');
  t.true(Amount.of((await f.balance('ETH')).available).cmp(Amount.of('0.4')) >= 0);
  t.is((await f.balance('USDT')).available, '30', 'USDT: the excess forwarded whole, the fee in USDT as reserved');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
  const rec = await ledgerReconcile(f.td);
  t.is(rec.code, 0, `${rec.report} ${rec.stderr}`);
});
