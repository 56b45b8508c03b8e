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
import { AccountEntity, SecurityLogEntity } from '../../../src/db/entities/team';
import { AddressEntity } from '../../../src/db/entities/chain';
import { SignedClient } from '../../helpers/api-client';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../helpers/anvil';
import { CliEnv, pastStartSecond } from '../../helpers/cli';
import { merchantWithKey, OtpSource, startPreparedDaemon } from '../../helpers/daemon';
import { CONFIRMATIONS, FAST_WATCH, RATES } from '../chains/evm/evm-fixture';
import { elsewhere, eth } from './evm-payout-fixture';

test.after.always(killAllAnvils);

async function until(ok: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('kill -9 after the payout is stored and after it is sent: after a restart each withdrawal is completed with exactly one transaction on the chain', async (t) => {
  const { node, usdt } = await startAnvil();
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: CONFIRMATIONS, options: FAST_WATCH });
  const env = new CliEnv({ chains: [chain], rates: RATES, log_level: 'info', payouts: { batch_window_seconds: 0, replace_after_blocks: 3 } });
  t.teardown(() => env.cleanup());
  const ETH = coinId('ethereum', 'native');

  // Prepared in this process: a verified merchant whose key may withdraw, 1 ETH paid in and swept.
  const setup = await startPreparedDaemon(configFromText(readFileSync(env.configFile, 'utf8')));
  const m = await merchantWithKey(setup, { permissions: ['read', 'create_invoice'] });
  const { key } = await setup.keys.create(m.accountId, { email: m.owner, otp: new OtpSource(m.ownerTotp, { now: () => new Date() }).next() }, { name: 'payouts', permissions: ['read', 'create_invoice', 'withdraw'], ip_whitelist: [], rate_limit_per_minute: 6000, test: false });
  await setup.store.write(async (em) => {
    await em.update(SecurityLogEntity, { account_id: m.accountId }, { created_at: new Date(Date.now() - 25 * 3600 * 1000).toISOString() });
    await em.update(AccountEntity, { id: m.accountId }, { verified: true });
  });
  const prep = new SignedClient(setup.apiUrl, key.key_id, key.secret);
  const inv = await prep.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: ETH }, { headers: { 'Content-Type': 'application/json' } });
  t.is(inv.status, 201, inv.text);
  await payFromAnvil(node, 'native', inv.json.address, '1', 18);
  let treasury = '';
  await until(async () => {
    await node.mine(1);
    const row = await setup.store.read.findOneBy(AddressEntity, { account_id: m.accountId, purpose: 'treasury' });
    treasury = row?.address ?? '';
    return row !== null && (await setup.store.read.query(`SELECT COUNT(*) AS n FROM evm_sends WHERE kind = 'sweep' AND status = 'mined'`))[0].n > 0;
  }, 'the deposit swept');
  await setup.stop();
  const adapter = new EvmAdapter(configFromText(readFileSync(env.configFile, 'utf8')).chains[0]!);

  const payees: string[] = [];
  for (const point of ['stored', 'sent'] as const) {
    const dying = await env.spawnDaemon({ env: { COINKEEP_TEST_PAYOUT_CRASH: point } });
    await pastStartSecond();
    const api = new SignedClient(dying.url, key.key_id, key.secret);
    const to = elsewhere();
    payees.push(to);
    const w = await api.post('/v1/withdrawals', { coin_id: ETH, amount: '0.2', to_address: to }, { headers: { 'Content-Type': 'application/json' } });
    t.is(w.status, 201, w.text);
    const exit = await dying.child.exited;
    t.is(exit.signal, 'SIGKILL', `killed itself ${point}`);
    const nonces = await adapter.nonce(treasury);
    t.is(nonces.pending, payees.length - (point === 'stored' ? 1 : 0), point === 'stored' ? 'nothing reached the node' : 'the payout reached the node');

    const again = await env.spawnDaemon();
    await pastStartSecond();
    const api2 = new SignedClient(again.url, key.key_id, key.secret);
    await until(async () => {
      await node.mine(1);
      const res = await api2.get(`/v1/withdrawals/${w.json.id}`);
      return res.json.status === 'completed';
    }, `the withdrawal killed ${point} completed`, 60_000);
    again.child.child.kill('SIGTERM');
    await again.child.exited;
  }
  for (const to of payees) t.is((await adapter.balances([to], 'native'))[0], eth('0.2'), 'paid once');
  t.deepEqual(await adapter.nonce(treasury), { latest: 2, pending: 2 }, 'exactly one transaction per withdrawal ever left the treasury');
});
