/**
 * kill -9 of a real coinkeepd around an EVM payout's broadcast (issue 19 §4): killed right after
 * the signed payout is stored, and right after its bytes went to the node; restarted, each
 * withdrawal is completed and the chain holds exactly one payout transaction for it (the
 * treasury's nonce counts them).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { coinId } from '../../../src/catalog/coins';
import { configFromText } from '../../../src/config/load';
import { EvmAdapter } from '../../../src/chains/evm/evm-adapter';
import { anvilChainEntry } from '../../../src/dev/anvil';
import { AddressEntity } from '../../../src/db/entities/chain';
import { SignedClient } from '../../helpers/api-client';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../helpers/anvil';
import { CliEnv } from '../../helpers/cli';
import { startPreparedDaemon } from '../../helpers/daemon';
import { payoutAcrossKills } from '../../helpers/payout-crash';
import { payoutMerchant, until } from '../../helpers/payout-fixture';
import { CONFIRMATIONS, FAST_WATCH, RATES } from '../chains/evm/evm-fixture';
import { elsewhere, eth } from './evm-payout-fixture';

test.after.always(killAllAnvils);

test('kill -9 after the payout is stored and after it is sent: after a restart each withdrawal is completed with exactly one transaction on the chain', async (t) => {
  const { node, usdt } = await startAnvil();
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: CONFIRMATIONS, options: FAST_WATCH });
  const env = new CliEnv({ chains: [chain], rates: RATES, log_level: 'info', payouts: { batch_window_seconds: 0, replace_after_blocks: 3 } });
  t.teardown(() => env.cleanup());
  const ETH = coinId('ethereum', 'native');

  // Prepared in this process: a verified merchant whose key may withdraw, 1 ETH paid in and swept.
  const setup = await startPreparedDaemon(configFromText(readFileSync(env.configFile, 'utf8')));
  const { m, key } = await payoutMerchant(setup);
  const prep = new SignedClient(setup.apiUrl, key.key_id, key.secret);
  const inv = await prep.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: ETH }, { headers: { 'Content-Type': 'application/json' } });
  t.is(inv.status, 201, inv.text);
  await payFromAnvil(node, 'native', inv.json.address, '1', 18);
  let treasury = '';
  await until(async () => {
    await node.mine(1);
    const row = await setup.store.read.findOneBy(AddressEntity, { account_id: m.accountId, purpose: 'treasury' });
    treasury = row?.address ?? '';
    return row !== null && (await setup.store.read.query(`SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n > 0;
  }, 'the deposit swept');
  await setup.stop();
  const adapter = new EvmAdapter(configFromText(readFileSync(env.configFile, 'utf8')).chains[0]!);

  const payees = await payoutAcrossKills(t, env, key, {
    payee: elsewhere,
    body: (to) => ({ coin_id: ETH, amount: '0.2', to_address: to }),
    // The treasury's transactions: none when killed after storing the first payout; the first and this one when killed after sending the second.
    killed: async (point) =>
      t.is(
        (await adapter.nonce(treasury)).pending,
        point === 'stored' ? 0 : 2,
        point === 'stored' ? 'nothing reached the node' : 'the payout reached the node',
      ),
    mine: () => node.mine(1),
  });
  for (const to of payees) t.is((await adapter.balances([to], 'native'))[0], eth('0.2'), 'paid once');
  t.deepEqual(await adapter.nonce(treasury), { latest: 2, pending: 2 }, 'exactly one transaction per withdrawal ever left the treasury');
});
