/**
 * Crash safety on a real chain: a real coinkeepd process scanning blocks with payments is killed
 * with SIGKILL half-way, then started again; every payment is credited exactly once and the ledger
 * matches its journal. The account, key and invoices are prepared by a daemon in this process
 * beforehand, on the same data dir.
 */
import test from 'ava';
import YAML from 'yaml';
import { readFileSync } from 'node:fs';
import { configFromText } from '../../../../src/config/load';
import { coinId } from '../../../../src/catalog/coins';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import { SignedClient } from '../../../helpers/api-client';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../../helpers/anvil';
import { CliEnv, pastStartSecond } from '../../../helpers/cli';
import { merchantWithKey, startPreparedDaemon } from '../../../helpers/daemon';
import { CONFIRMATIONS, RATES } from './evm-fixture';

test.after.always(killAllAnvils);

interface Tx {
  type: string;
  status: string;
  invoice_id: string;
  amount: string;
}

const confirmedPayments = async (api: SignedClient): Promise<Tx[]> => {
  const res = await api.get('/v1/transactions?limit=100');
  if (res.status !== 200) throw new Error(`GET transactions: ${res.status} ${res.text}`);
  return (res.json.items as Tx[]).filter((x) => x.type === 'invoice_payment' && x.status === 'confirmed');
};

test('kill -9 of the daemon in the middle of a scan, then a restart: every payment credited exactly once, ledger clean', async (t) => {
  const { node, usdt } = await startAnvil();
  // One block per batch, so the scan of the payments below takes many commits to interrupt.
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: CONFIRMATIONS, options: { poll_interval_ms: 50, batch_size: 1, stall_seconds: 0 } });
  const env = new CliEnv({ chains: [chain], rates: RATES, log_level: 'info' });
  t.teardown(() => env.cleanup());

  const config = configFromText(readFileSync(env.configFile, 'utf8'));
  const setup = await startPreparedDaemon(config);
  const m = await merchantWithKey(setup);
  const prepApi = new SignedClient(setup.apiUrl, m.keyId, m.secret);
  const invoices: Array<{ id: string; address: string; ticker: 'ETH' | 'USDT'; amount: string }> = [];
  for (const [ticker, amount] of [
    ['ETH', '0.11'],
    ['USDT', '3.5'],
    ['ETH', '0.22'],
    ['USDT', '4.25'],
    ['ETH', '0.33'],
    ['USDT', '6'],
  ] as const) {
    const res = await prepApi.post(
      '/v1/invoices',
      { amount, currency: ticker, coin_id: coinId('ethereum', ticker === 'ETH' ? 'native' : usdt) },
      { headers: { 'Content-Type': 'application/json' } },
    );
    t.is(res.status, 201, res.text);
    invoices.push({ id: res.json.id, address: res.json.address, ticker, amount });
  }
  await setup.stop();

  for (const inv of invoices) {
    await payFromAnvil(node, inv.ticker === 'ETH' ? 'native' : usdt, inv.address, inv.amount, inv.ticker === 'ETH' ? 18 : 6);
    await node.mine(40);
  }

  const first = await env.spawnDaemon();
  const api1 = new SignedClient(first.url, m.keyId, m.secret);
  let atKill: Tx[] = [];
  const deadline = Date.now() + 20_000;
  while (atKill.length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    atKill = await confirmedPayments(api1);
  }
  first.child.child.kill('SIGKILL');
  await first.child.exited;
  t.true(atKill.length > 0 && atKill.length < invoices.length, `killed after ${atKill.length} of ${invoices.length} payments were credited`);

  const second = await env.spawnDaemon();
  // After the crash the restarted daemon refuses every signature timestamped up to its start.
  await pastStartSecond();
  const api2 = new SignedClient(second.url, m.keyId, m.secret);
  let credited: Tx[] = [];
  const until = Date.now() + 20_000;
  while (credited.length < invoices.length && Date.now() < until) {
    credited = await confirmedPayments(api2);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Scanning on past the payments credits nothing more.
  await node.mine(1);
  const tip = await node.blockNumber();
  const scanned = Date.now() + 10_000;
  let status = await env.run(['--json', 'status']);
  while (status.json?.chains?.[0]?.scanned_height !== tip && Date.now() < scanned) status = await env.run(['--json', 'status']);
  t.like(status.json.chains[0], { chain_id: 'ethereum', kind: 'evm', node_tip: tip, scanned_height: tip, lag: 0, maintenance: false });
  t.regex((await env.run(['status'])).stdout, new RegExp(`ethereum \\(evm\\)  tip ${tip}  scanned ${tip}  lag 0  ok`));
  credited = await confirmedPayments(api2);
  t.deepEqual(credited.map((x) => x.invoice_id).sort(), invoices.map((i) => i.id).sort(), 'one confirmed payment per invoice');
  for (const inv of invoices) {
    const got = await api2.get(`/v1/invoices/${inv.id}`);
    t.like(got.json, { status: 'paid', paid_amount: inv.amount });
  }
  const balances = (await api2.get('/v1/balances')).json.items as Array<{ ticker: string; available: string }>;
  t.is(balances.find((b) => b.ticker === 'ETH')!.available, '0.66');
  t.is(balances.find((b) => b.ticker === 'USDT')!.available, '13.75');

  const verify = await env.run(['--json', 'ledger', 'verify']);
  t.is(verify.code, 0, verify.stderr);
  t.true(verify.json.ok);
  const stopped = await second.child.stop('SIGTERM');
  t.is(stopped.code, 0);
});
