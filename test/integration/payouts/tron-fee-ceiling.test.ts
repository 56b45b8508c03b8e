/**
 * Tron's fee ceiling (PRODUCT §14: `payouts.max_fee`, TRX one transfer may burn, its fee_limit
 * included), on the node stand-in, where a USDT transfer to a new holder takes 29,650 energy
 * (12.453 TRX at the burn price) and 350 bytes of bandwidth.
 */
import test from 'ava';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile } from '../../helpers/daemon';
import { minedFrom, startTronPayoutFixture, units } from './tron-payout-fixture';

test('a token sweep whose fee_limit would pass the ceiling is signed with its fee_limit at the ceiling', async (t) => {
  const f = await startTronPayoutFixture({ payouts: { max_fee: '14' } });
  t.teardown(() => f.stop());
  const deposit = await f.paidInvoice('USDT', '50');
  const treasury = await f.treasury();
  await f.until(async () => f.node.tokenBalance(treasury) === units('50'), 'the deposit swept');
  const [sweep] = minedFrom(f.node, deposit.address);
  t.is(BigInt(sweep!.raw_data.fee_limit!), units('14'), "the dry run's energy and a fifth more is 14.94 TRX: cut at the ceiling");
});

test('a token sweep that may burn more than the ceiling waits, named in coinkeep status; a TRX deposit is swept', async (t) => {
  const f = await startTronPayoutFixture({ payouts: { max_fee: '5' } });
  t.teardown(() => f.stop());
  const usdt = await f.paidInvoice('USDT', '50');
  await f.paidInvoice('TRX', '300');
  const treasury = await f.treasury();
  await f.until(async () => f.node.trxBalance(treasury) > units('290'), 'the TRX deposit swept');
  let named: any;
  await f.until(async () => {
    const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', 'status'], { timeoutMs: 30_000 });
    named = JSON.parse(r.stdout).fee_ceilings?.find((c: any) => c.chain_id === 'tron');
    return named !== undefined;
  }, 'the chain named in coinkeep status');
  t.like(named, { ceiling: '5 TRX', waiting: ['sweeps'] });
  t.is(f.node.tokenBalance(usdt.address), units('50'), 'not swept');
  t.deepEqual(minedFrom(f.node, usdt.address), [], 'nothing sent from the token deposit');
});
