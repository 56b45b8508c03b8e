/**
 * A node of another network than the chain's config, black-box through the daemon: at first
 * contact (bcoin regtest under a chain configured `testnet`), and after a reconnect (the anvil
 * behind the chain's URL replaced by one of another chain id). Either way the chain's coins are in
 * maintenance with the reason in `coinkeep status`; the same for a Tron node whose genesis block is
 * not the configured network's, at first contact and behind the chain's URL after a reconnect, new invoices for them answer 503, and a payment
 * on the wrong network credits nothing.
 */
import test from 'ava';
import { coinId } from '../../../src/catalog/coins';
import { anvilChainEntry } from '../../../src/dev/anvil';
import { SignedClient } from '../../helpers/api-client';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../helpers/anvil';
import { killAllBcoins, startBcoin } from '../../helpers/bcoin';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile, merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';
import { TcpGate } from '../../helpers/tcp-gate';
import { TronNode } from '../../helpers/tron-node';
import { btcChain, BTC } from './btc/btc-fixture';
import { FAST_WATCH, RATES } from './evm/evm-fixture';
import { waitUntil } from '../../helpers/poll';

test.after.always(killAllBcoins);
test.after.always(killAllAnvils);

const json = { headers: { 'Content-Type': 'application/json' } };

async function chainStatus(td: TestDaemon, chainId: string): Promise<{ maintenance: boolean; last_error: string | null }> {
  const r = await runBin(COINKEEP_BIN, ['--config', cliConfigFile(td), '--json', 'status'], { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`coinkeep status failed: ${r.stderr}`);
  return (r.json as { chains: Array<{ chain_id: string; maintenance: boolean; last_error: string | null }> }).chains.find((c) => c.chain_id === chainId)!;
}

/** Polls with a deadline of 20,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> => waitUntil(what, ok, timeoutMs);

test('bcoin on regtest under a chain configured testnet: BTC is in maintenance with the reason in coinkeep status, and a BTC invoice answers 503', async (t) => {
  const node = await startBcoin();
  const td = await startTestDaemon({ chains: [{ ...btcChain(node), network: 'testnet' }] });
  t.teardown(() => td.stop());
  const status = await chainStatus(td, 'bitcoin');
  t.like(status, { maintenance: true, last_error: 'bitcoin node is on chain regtest, the config says testnet' });
  const m = await merchantWithKey(td.daemon);
  const api = new SignedClient(td.url, m.keyId, m.secret);
  const res = await api.post('/v1/invoices', { amount: '0.001', currency: 'BTC', coin_id: BTC }, json);
  t.is(res.status, 503);
  t.is(res.json.error.code, 'unavailable');
  t.deepEqual((await api.get('/v1/invoices')).json.items, []);
});

test('the anvil behind an EVM chain replaced by one of another chain id: ETH goes into maintenance with the reason, and a payment there credits nothing', async (t) => {
  const good = await startAnvil();
  const other = await startAnvil({ chainId: 137 });
  const gate = new TcpGate(good.node.port);
  await gate.open();
  t.teardown(() => gate.close());
  const td = await startTestDaemon({ chains: [anvilChainEntry(gate.url, good.usdt, { options: FAST_WATCH })], rates: RATES });
  t.teardown(() => td.stop());
  const m = await merchantWithKey(td.daemon);
  const api = new SignedClient(td.url, m.keyId, m.secret);
  await until('the chain watched', () => td.daemon.chains.status()[0]!.scanned_height !== null && !td.daemon.chains.status()[0]!.maintenance);
  const eth = coinId('ethereum', 'native');
  const created = await api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: eth }, json);
  t.is(created.status, 201, created.text);

  // The same URL now leads to a node of chain id 137, where the invoice's address is paid in full.
  await gate.close();
  gate.retarget(other.node.port);
  await gate.open();
  await payFromAnvil(other.node, 'native', created.json.address, '1', 18);
  await other.node.mine(5);
  await until('maintenance', () => td.daemon.chains.status()[0]!.maintenance);
  t.like(await chainStatus(td, 'ethereum'), { maintenance: true, last_error: 'evm node is on chain id 137, the config says 31337' });
  const refused = await api.post('/v1/invoices', { amount: '1', currency: 'ETH', coin_id: eth }, json);
  t.is(refused.status, 503);
  t.is(refused.json.error.code, 'unavailable');
  t.like((await api.get(`/v1/invoices/${created.json.id}`)).json, { status: 'new', paid_amount: '0' });
  t.deepEqual((await api.get(`/v1/transactions?invoice_id=${created.json.id}`)).json.items, []);
  const balances = (await api.get('/v1/balances')).json.items as Array<{ coin_id: string; available: string }>;
  t.is(balances.find((b) => b.coin_id === eth)?.available ?? '0', '0');
});

test('a tron chain whose full node cannot be reached: its coins are in maintenance with the reason in coinkeep status, and an invoice for them answers 503', async (t) => {
  const td = await startTestDaemon({ chains: [{ id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:9', confirmations: 1 }] });
  t.teardown(() => td.stop());
  const status = await chainStatus(td, 'tron');
  t.true(status.maintenance);
  t.regex(status.last_error ?? '', /^tron node getnowblock: unreachable/);
  const m = await merchantWithKey(td.daemon);
  const api = new SignedClient(td.url, m.keyId, m.secret);
  const currencies = (await (await fetch(`${td.url}/v1/currencies`)).json()) as { items: Array<{ id: string; maintenance: boolean }> };
  t.true(currencies.items.find((c) => c.id === coinId('tron', 'native'))!.maintenance);
  const res = await api.post('/v1/invoices', { amount: '5', currency: 'TRX', coin_id: coinId('tron', 'native') }, json);
  t.is(res.status, 503);
  t.is(res.json.error.code, 'unavailable');
  t.deepEqual((await api.get('/v1/invoices')).json.items, []);
});

test('a Tron node of another network: at first contact (a stand-in under a chain configured mainnet), and behind the same URL after a reconnect (another stand-in): TRX and USDT in maintenance with the reason, nothing credited', async (t) => {
  const bad = await TronNode.start();
  t.teardown(() => bad.stop());
  const first = await startTestDaemon({
    chains: [{ id: 'tron', kind: 'tron', full_node_url: bad.url, confirmations: 1, options: { poll_interval_ms: 50, stall_seconds: 0 } }],
  });
  t.teardown(() => first.stop());
  t.like(await chainStatus(first, 'tron'), { maintenance: true, last_error: `tron node's genesis block is ${bad.genesisId}, the config says mainnet` });

  const good = await TronNode.start();
  t.teardown(() => good.stop());
  const gate = new TcpGate(good.port);
  await gate.open();
  t.teardown(() => gate.close());
  const chain = {
    id: 'tron',
    kind: 'tron',
    full_node_url: gate.url,
    confirmations: 1,
    tokens: [{ ticker: 'USDT', contract: good.usdt, decimals: 6 }],
    options: { poll_interval_ms: 50, stall_seconds: 0, genesis_block_id: good.genesisId },
  };
  const td = await startTestDaemon({ chains: [chain], rates: { sources: [{ kind: 'fixed', rates: { TRX: { USD: '0.25' }, USDT: { USD: '1' } } }] } });
  t.teardown(() => td.stop());
  await until('the chain watched', () => td.daemon.chains.status()[0]!.scanned_height !== null && !td.daemon.chains.status()[0]!.maintenance);
  const m = await merchantWithKey(td.daemon);
  const api = new SignedClient(td.url, m.keyId, m.secret);
  const trx = coinId('tron', 'native');
  const created = await api.post('/v1/invoices', { amount: '10', currency: 'TRX', coin_id: trx }, json);
  t.is(created.status, 201, created.text);

  // The same URL now leads to the other network's node, where the invoice's address is paid in full.
  await gate.close();
  gate.retarget(bad.port);
  await gate.open();
  bad.pay(created.json.address, 'native', 10_000_000n);
  bad.mine(3);
  await until('maintenance', () => td.daemon.chains.status()[0]!.maintenance);
  t.like(await chainStatus(td, 'tron'), {
    maintenance: true,
    last_error: `tron node's genesis block is ${bad.genesisId}, the config says genesis block ${good.genesisId}`,
  });
  const refused = await api.post('/v1/invoices', { amount: '10', currency: 'TRX', coin_id: trx }, json);
  t.is(refused.status, 503);
  t.is(refused.json.error.code, 'unavailable');
  t.like((await api.get(`/v1/invoices/${created.json.id}`)).json, { status: 'new', paid_amount: '0' });
  t.deepEqual((await api.get(`/v1/transactions?invoice_id=${created.json.id}`)).json.items, []);
});
