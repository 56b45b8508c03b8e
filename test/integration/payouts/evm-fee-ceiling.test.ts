/**
 * Fees have ceilings (PRODUCT §14), on a real anvil: while blocks ask more than the chain's
 * `payouts.max_fee`, a payout waits in `pending` and `coinkeep status` names the chain, what its
 * node asks and the ceiling; nothing the daemon sends ever offers more than the ceiling; once the
 * base fee comes down the payout is paid.
 */
import test from 'ava';
import { parseUnits, Transaction } from 'ethers';
import { killAllAnvils } from '../../helpers/anvil';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile } from '../../helpers/daemon';
import { elsewhere, eth, startEvmPayoutFixture, type EvmPayoutFixture } from './evm-payout-fixture';

test.after.always(killAllAnvils);

const CEILING = parseUnits('5', 'gwei');

async function status(f: EvmPayoutFixture): Promise<any> {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), '--json', 'status'], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`coinkeep status: ${r.code} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test("while the base fee is above the chain's max_fee a payout waits in pending, coinkeep status names the chain, the quote and the ceiling, nothing is sent above it; once the fee falls it is paid", async (t) => {
  const f = await startEvmPayoutFixture({ chain: { payouts: { max_fee: '5' } } });
  t.teardown(() => f.stop());
  await f.paidAndSwept('ETH', '1');

  // The next blocks ask 50 gwei a gas (an empty block takes an eighth off: still far above 5).
  await f.node.rpc('anvil_setNextBlockBaseFeePerGas', [`0x${parseUnits('50', 'gwei').toString(16)}`]);
  await f.node.mine(1);
  const to = elsewhere();
  const w = await f.withdraw({ coin_id: f.coin.ETH, amount: '0.2', to_address: to });
  let named: any;
  await f.until(
    async () => (named = (await status(f)).fee_ceilings?.find((c: any) => c.chain_id === f.chainId)) !== undefined,
    'the chain named in coinkeep status',
    60_000,
  );
  t.like(named, { chain_id: f.chainId, ceiling: '5 gwei', waiting: ['payouts'] });
  t.regex(named.quote, /^4\d(\.\d+)? gwei$/, "the next block's base fee and the tip");
  const text = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(f.td), 'status'], { timeoutMs: 30_000 });
  t.regex(text.stdout, new RegExp(`${f.chainId}  the node asks 4\\d.* gwei, payouts\\.max_fee is 5 gwei: payouts wait`));
  t.is((await f.get(w.id)).status, 'pending');
  t.is((await f.td.daemon.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'payout'`))[0].n, 0, 'nothing signed');
  t.deepEqual(await f.node.rpc('txpool_status'), { pending: '0x0', queued: '0x0' }, 'nothing sent');

  // Empty blocks take the base fee down under the ceiling: the payout goes out and completes.
  const stop = f.miner(50);
  t.teardown(stop);
  const done = await f.waitWithdrawal(w.id, (x) => x.status === 'completed', 'completed', 90_000);
  await f.quiet();
  await stop();
  t.is(await f.onChain(to, 'ETH'), eth('0.2'));
  const mined = Transaction.from(await f.node.rpc<string>('eth_getRawTransactionByHash', [done.txid]));
  t.true(mined.maxFeePerGas! <= CEILING, `offered ${mined.maxFeePerGas}`);
  const caps: Array<{ max_fee_per_gas: string }> = await f.td.daemon.store.read.query(`SELECT max_fee_per_gas FROM account_sends`);
  t.true(
    caps.every((r) => BigInt(r.max_fee_per_gas) <= CEILING),
    'no send of the daemon above the ceiling',
  );
  t.deepEqual((await status(f)).fee_ceilings, [], 'no longer named');
  const check = await f.booksMatchChain();
  t.true(check.ok, check.detail);
});
