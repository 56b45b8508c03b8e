/**
 * A payout's "sweep now" is a row (issue 29 §6): on a shared database the daemon that runs a
 * chain's payouts may not be the one holding its sweeps. On a real anvil: the daemon's own sweep
 * passes are held back, a payout that needs deposits under their minimum asks for them, and
 * another daemon's sweeps (the same wiring on the same database, in this process) sweep them; the
 * payout is then paid once.
 */
import test from 'ava';
import { createEvmPayouts } from '../../../src/daemon/evm-payouts.wiring';
import { loadMasterKey, Sealer } from '../../../src/db/seal';
import { feeCeilings } from '../../../src/payouts/fee-ceiling';
import { silentLogger } from '../../../src/shared/logger';
import { systemClock } from '../../../src/shared/clock';
import { killAllAnvils } from '../../helpers/anvil';
import { elsewhere, eth, startEvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

test('a payout waiting for deposits under their sweep minimum asks for them in the database: another daemon holding the sweeps sweeps them, and the payout is paid once', async (t) => {
  const f = await startEvmPayoutFixture({ chain: { sweep: { min: { ETH: '1000' } } } });
  t.teardown(() => f.stop());
  const d = f.td.daemon;
  // This daemon runs the payouts but not the sweeps.
  const own = d.evmPayouts.byChain.get(f.chainId)!;
  const ownPass = own.pass.bind(own);
  own.pass = async () => undefined;
  t.teardown(() => void (own.pass = ownPass));
  await f.paidInvoice('ETH', '0.3');
  await f.paidInvoice('ETH', '0.3');
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.5', to_address: to });
  await f.until(async () => (await d.store.read.query(`SELECT COUNT(*) AS n FROM sweep_requests`))[0].n > 0, 'the payout asks for a sweep');

  // The other daemon's sweeps: the same wiring on the same database and master key, nothing shared in memory.
  const other = createEvmPayouts({
    config: d.config,
    store: d.store,
    catalog: d.catalog,
    chains: d.chains,
    addresses: d.addresses,
    signer: d.signer,
    sealer: new Sealer(loadMasterKey(f.td.dataDir, { create: false })),
    money: d.money,
    ceilings: feeCeilings(d.config.chains, systemClock),
    clock: systemClock,
    logger: silentLogger,
  }).byChain.get(f.chainId)!;
  const swept = async () => (await d.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n >= 2;
  await f.until(
    async () => {
      await other.pass();
      await f.node.mine(1);
      return swept();
    },
    'both deposits swept by the other daemon',
    60_000,
  );
  t.is((await d.store.read.query(`SELECT COUNT(*) AS n FROM sweep_requests`))[0].n, 0, 'the request taken');

  own.pass = ownPass;
  const stop = f.miner();
  t.teardown(stop);
  await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 60_000);
  await f.quiet();
  await stop();
  t.is(await f.onChain(to, 'ETH'), eth('0.5'));
  t.is((await d.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'payout'`))[0].n, 1, 'signed once');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
