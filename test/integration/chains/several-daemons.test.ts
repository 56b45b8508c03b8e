/**
 * Several daemons on one PostgreSQL database, watching one chain: real coinkeepd processes behind
 * what would be a load balancer. One of them scans the chain, the other follows; invoices made
 * through either are paid and credited once; when the scanning daemon is killed with SIGKILL the
 * other takes the chain over from the cursor in the database. The account and key are prepared by a
 * daemon in this process beforehand, on the same database.
 */
import test from 'ava';
import { chmodSync, copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { In } from 'typeorm';
import { coinId } from '../../../src/catalog/coins';
import { configFromText } from '../../../src/config/load';
import { startDaemon } from '../../../src/daemon/main';
import { EventEntity } from '../../../src/db/entities/events';
import { InvoiceEntity } from '../../../src/db/entities/money';
import { loadMasterKey, masterKeyPath } from '../../../src/db/seal';
import { Store } from '../../../src/db/store';
import { anvilChainEntry } from '../../../src/dev/anvil';
import { silentLogger } from '../../../src/shared/logger';
import { prepareSeed } from '../../../src/wallet/signer-process/main';
import { signerKeyPath } from '../../../src/wallet/signer-process/vault';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../helpers/anvil';
import { SignedClient } from '../../helpers/api-client';
import { CliEnv, until, type Running } from '../../helpers/cli';
import { merchantWithKey, TEST_MNEMONIC } from '../../helpers/daemon';
import { tempPostgres } from '../../helpers/pg-database';
import { CONFIRMATIONS, RATES } from './evm/evm-fixture';

test.after.always(killAllAnvils);

interface Invoice {
  id: string;
  address: string;
  amount: string;
}

interface ChainLine {
  scanning: boolean;
  maintenance: boolean;
  scanned_height: number | null;
  last_error: string | null;
}

/** One coinkeepd process of the pair: its CLI env (own data dir and admin socket) and API. */
interface Member {
  env: CliEnv;
  child: Running;
  get(target: string): Promise<{ status: number; json: any }>;
  post(target: string, body: unknown): Promise<{ status: number; json: any }>;
}

test('two daemons on one database: invoices made through either are credited once each, and when the scanning one is killed the other scans on, missing nothing', async (t) => {
  const url = await tempPostgres(t);
  const { node, usdt } = await startAnvil();
  const chain = anvilChainEntry(node.rpcUrl, usdt, { confirmations: CONFIRMATIONS, options: { poll_interval_ms: 100, stall_seconds: 0 } });
  const overrides = { database: { url }, chains: [chain], rates: RATES, log_level: 'info' };
  const envs = [new CliEnv(overrides), new CliEnv(overrides)] as const;
  t.teardown(async () => {
    for (const env of envs) await env.cleanup();
  });

  // Both daemons hold the same master key, as daemons sharing a database must.
  const config = configFromText(readFileSync(envs[0].configFile, 'utf8'));
  loadMasterKey(config.data_dir, { create: true });
  mkdirSync(envs[1].dataDir, { recursive: true, mode: 0o700 });
  copyFileSync(masterKeyPath(config.data_dir), masterKeyPath(envs[1].dataDir));
  chmodSync(masterKeyPath(envs[1].dataDir), 0o600);
  await prepareSeed(config, TEST_MNEMONIC);
  // And the same signer key: each daemon's signer opens the one seed.
  copyFileSync(signerKeyPath(config.data_dir), signerKeyPath(envs[1].dataDir));
  chmodSync(signerKeyPath(envs[1].dataDir), 0o600);
  const setup = await startDaemon(config, { logger: silentLogger });
  const m = await merchantWithKey(setup);
  await setup.stop();

  // One signer for both daemons: they share the replay guard, so the same request signed in the
  // same second for each would be refused by the second as a replay (SPEC: sign again).
  const signer = new SignedClient('', m.keyId, m.secret);
  const send = async (apiUrl: string, method: 'GET' | 'POST', target: string, body?: unknown) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...signer.headers(method, target, text), ...(text === undefined ? {} : { 'Content-Type': 'application/json' }) };
    const res = await fetch(`${apiUrl}${target}`, { method, headers, body: text });
    return { status: res.status, json: await res.json() };
  };
  const start = async (env: CliEnv): Promise<Member> => {
    const { child, url: apiUrl } = await env.spawnDaemon();
    return { env, child, get: (target) => send(apiUrl, 'GET', target), post: (target, body) => send(apiUrl, 'POST', target, body) };
  };
  const chainLine = async (member: Member): Promise<ChainLine> => {
    const status = await member.env.run(['--json', 'status']);
    if (status.code !== 0) throw new Error(`status: ${status.stderr}`);
    return status.json.chains[0];
  };
  const ETH = coinId('ethereum', 'native');
  const createInvoice = async (member: Member, amount: string): Promise<Invoice> => {
    const res = await member.post('/v1/invoices', { amount, currency: 'ETH', coin_id: ETH });
    if (res.status !== 201) throw new Error(`POST /v1/invoices: ${res.status} ${JSON.stringify(res.json)}`);
    return { id: res.json.id, address: res.json.address, amount };
  };
  const pay = async (inv: Invoice) => payFromAnvil(node, 'native', inv.address, inv.amount, 18);
  // Waits read the database (signed requests are a few hundred per key in any 300 s).
  const store = await Store.open({ url });
  t.teardown(() => store.close());
  const allPaid = async (invoices: Invoice[]) =>
    (await store.read.countBy(InvoiceEntity, { id: In(invoices.map((i) => i.id)), status: 'paid' })) === invoices.length;

  const a = await start(envs[0]);
  const b = await start(envs[1]);
  const [lineA, lineB] = [await chainLine(a), await chainLine(b)];
  t.like(lineA, { scanning: true, maintenance: false });
  t.like(lineB, { scanning: false, maintenance: false });
  t.regex((await b.env.run(['status'])).stdout, /ethereum \(evm\) .* ok \(scanned by another daemon\)/);

  t.is((await a.get('/v1/balances')).status, 200);
  t.is((await b.get('/v1/balances')).status, 200);

  // Ten invoices, half through the follower: the scanner learns of its addresses.
  const first: Invoice[] = [];
  for (let i = 0; i < 10; i++) first.push(await createInvoice(i % 2 ? b : a, `0.${i + 11}1`));
  for (const inv of first.slice(0, 6)) await pay(inv);
  await node.mine(CONFIRMATIONS);
  await until(() => allPaid(first.slice(0, 6)), 20_000, 'the first six invoices paid');

  // Four more payments, and the scanning daemon is killed while they are mined.
  for (const inv of first.slice(6)) await pay(inv);
  await node.mine(CONFIRMATIONS);
  a.child.child.kill('SIGKILL');
  await a.child.exited;
  const killedAt = Date.now();
  await until(async () => (await chainLine(b)).scanning, 20_000, 'the other daemon scanning');
  t.log(`the chain was taken over ${Date.now() - killedAt} ms after the kill`);

  // Ten more invoices and payments after the kill, through the daemon left.
  const second: Invoice[] = [];
  for (let i = 0; i < 10; i++) second.push(await createInvoice(b, `0.${i + 21}1`));
  for (const inv of second) await pay(inv);
  await node.mine(CONFIRMATIONS);
  const invoices = [...first, ...second];
  await until(() => allPaid(invoices), 20_000, 'every invoice paid');

  // The killed daemon comes back and follows.
  const again = await start(envs[0]);
  t.like(await chainLine(again), { scanning: false, maintenance: false });
  await node.mine(1);
  const tip = await node.blockNumber();
  await until(async () => (await chainLine(again)).scanned_height === tip, 10_000, 'the follower showing the scanner at the tip');
  t.like(await chainLine(b), { scanning: true, maintenance: false, scanned_height: tip, last_error: null });

  for (const inv of invoices) t.like((await again.get(`/v1/invoices/${inv.id}`)).json, { status: 'paid', paid_amount: inv.amount });
  const txs = (await b.get('/v1/transactions?limit=100')).json.items as Array<{ type: string; status: string; invoice_id: string }>;
  const payments = txs.filter((x) => x.type === 'invoice_payment');
  t.is(payments.length, invoices.length, 'one payment per invoice');
  t.true(payments.every((x) => x.status === 'confirmed'));
  t.deepEqual(payments.map((x) => x.invoice_id).sort(), invoices.map((i) => i.id).sort());

  const paidEvents = await store.read.find(EventEntity, { where: { type: 'invoice.paid', object_id: In(invoices.map((i) => i.id)) } });
  t.deepEqual(paidEvents.map((e) => e.object_id).sort(), invoices.map((i) => i.id).sort(), 'one invoice.paid per invoice');

  const verify = await b.env.run(['--json', 'ledger', 'verify']);
  t.is(verify.code, 0, verify.stderr);
  t.true(verify.json.ok);
  for (const member of [again, b]) t.is((await member.child.stop('SIGTERM')).code, 0);
});
