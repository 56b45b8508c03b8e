/**
 * kill -9 of a real daemon process (bin/coinkeepd) while it scans blocks of payments on bcoin, then
 * restart: every payment is credited exactly once, none is missed, and the books stay true.
 */
import test from 'ava';
import { coinId } from '../../../../src/catalog/coins';
import { Amount } from '../../../../src/shared/amount';
import { SignedClient } from '../../../helpers/api-client';
import { killAllBcoins, sats, startBcoin } from '../../../helpers/bcoin';
import { CliEnv } from '../../../helpers/cli';
import { merchantWithKey, startPreparedDaemon, testConfig } from '../../../helpers/daemon';
import { btcChain, CONFIRMATIONS, until } from './btc-fixture';

test.after.always(killAllBcoins);

const PAYMENTS = Array.from({ length: 12 }, (_, i) => Amount.of(`0.0${11 + i}`).toString());

test('kill -9 of the daemon mid-scan, then restart: every payment credited once, none missed', async (t) => {
  const node = await startBcoin();
  // One block per request: the scan of the payments' blocks spans many transactions to land in.
  const chains = [btcChain(node, { batch_size: 1 })];
  const env = new CliEnv({ chains, log_level: 'info' });
  t.teardown(() => env.cleanup());

  // The merchant and its invoices, made by the daemon in this process on the same data dir.
  const config = testConfig(env.dataDir, { chains });
  const setup = await startPreparedDaemon(config);
  const m = await merchantWithKey(setup);
  let api = new SignedClient(setup.apiUrl, m.keyId, m.secret);
  const invoices: Array<{ id: string; address: string; amount: string }> = [];
  for (const amount of PAYMENTS) {
    const res = await api.post('/v1/invoices', JSON.stringify({ amount, currency: 'BTC', coin_id: coinId('bitcoin', 'native') }), {
      headers: { 'Content-Type': 'application/json' },
    });
    t.is(res.status, 201);
    invoices.push({ id: res.json.id, address: res.json.address, amount });
  }
  await setup.stop();

  // Each payment in a block of its own, all of them deep enough, while no daemon runs.
  for (const inv of invoices) {
    await node.pay([{ address: inv.address, value: sats(inv.amount) }]);
    await node.mine(1);
  }
  await node.mine(CONFIRMATIONS);

  const credited = async (): Promise<number> => {
    const res = await api.get('/v1/transactions?type=invoice_payment&status=confirmed&limit=100');
    return res.status === 200 ? (res.json.items as unknown[]).length : -1;
  };
  // Killed as soon as a credit shows, twice: each restart resumes a scan cut short.
  let before = 0;
  for (let round = 0; round < 2; round++) {
    const child = await env.spawnDaemon();
    api = new SignedClient(child.url, m.keyId, m.secret);
    // A scan that already finished (a fast machine) is killed idle: the restart must still add nothing.
    await until(async () => (await credited()) > Math.min(before, PAYMENTS.length - 1), 'a new credit');
    before = await credited();
    t.is((await child.child.stop('SIGKILL')).signal, 'SIGKILL');
    t.log(`killed with ${before} or more of ${PAYMENTS.length} payments credited`);
  }

  const child = await env.spawnDaemon();
  api = new SignedClient(child.url, m.keyId, m.secret);
  await until(async () => (await credited()) === PAYMENTS.length, 'every payment credited');
  for (const inv of invoices) {
    const res = await api.get(`/v1/invoices/${inv.id}`);
    t.like(res.json, { status: 'paid', paid_amount: inv.amount }, JSON.stringify(res.json));
  }
  const all = await api.get('/v1/transactions?limit=100');
  t.is(all.json.items.length, PAYMENTS.length, 'one transaction per payment, no adjustment');
  const balances = await api.get('/v1/balances');
  t.is(
    balances.json.items.find((b: { coin_id: string }) => b.coin_id === coinId('bitcoin', 'native')).available,
    PAYMENTS.reduce((a, p) => a.plus(Amount.of(p)), Amount.zero()).toString(),
  );
  const verify = await env.run(['--json', 'ledger', 'verify']);
  t.is(verify.code, 0, verify.stderr);
  t.true(verify.json.ok);
  await child.child.stop('SIGTERM');
});
