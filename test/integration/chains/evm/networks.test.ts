/**
 * Several EVM chains from one config, each on its own node: a payment counts only on the chain it
 * was made on, even to the same address; a node of another network than its chain's `chain_id`
 * is refused and its coins stay in maintenance.
 */
import test from 'ava';
import { coinId } from '../../../../src/catalog/coins';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import { SignedClient } from '../../../helpers/api-client';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../../helpers/anvil';
import { merchantWithKey, startTestDaemon } from '../../../helpers/daemon';
import { CONFIRMATIONS, FAST_WATCH, RATES } from './evm-fixture';
import { waitUntil } from '../../../helpers/poll';

test.after.always(killAllAnvils);

/** Polls with a deadline of 10,000 ms unless told (test/helpers/poll.ts). */
const until = (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> => waitUntil(what, ok, timeoutMs);

test('two EVM chains: each invoice is paid on its own chain only, the same address on the other chain counts for nothing', async (t) => {
  const eth = await startAnvil();
  const l2 = await startAnvil({ chainId: 137 });
  const td = await startTestDaemon({
    chains: [
      anvilChainEntry(eth.node.rpcUrl, eth.usdt, { options: FAST_WATCH }),
      anvilChainEntry(l2.node.rpcUrl, l2.usdt, { id: 'polygon', chain_id: 137, native: { ticker: 'POL', decimals: 18 }, options: FAST_WATCH }),
    ],
    rates: RATES,
  });
  t.teardown(() => td.stop());
  const m = await merchantWithKey(td.daemon);
  const api = new SignedClient(td.url, m.keyId, m.secret);
  const json = { headers: { 'Content-Type': 'application/json' } };
  const polygonUsdt = coinId('polygon', l2.usdt);
  const created = await api.post('/v1/invoices', { amount: '4', currency: 'USDT', coin_id: polygonUsdt }, json);
  t.is(created.status, 201, created.text);
  const inv = created.json;
  t.is(inv.network, 'polygon');

  // The same token contract address and the same deposit address, but on the other chain.
  await payFromAnvil(eth.node, eth.usdt, inv.address, '4', 6);
  await eth.node.mine(CONFIRMATIONS);
  const ethTip = await eth.node.blockNumber();
  await until('ethereum scanned', () => td.daemon.chains.status().find((c) => c.chain_id === 'ethereum')!.scanned_height === ethTip);
  t.like((await api.get(`/v1/invoices/${inv.id}`)).json, { status: 'new', paid_amount: '0' });

  await payFromAnvil(l2.node, l2.usdt, inv.address, '4', 6);
  await l2.node.mine(CONFIRMATIONS - 1);
  const l2Tip = await l2.node.blockNumber();
  await until('polygon scanned', () => td.daemon.chains.status().find((c) => c.chain_id === 'polygon')!.scanned_height === l2Tip);
  t.like((await api.get(`/v1/invoices/${inv.id}`)).json, { status: 'paid', paid_amount: '4', network: 'polygon' });
  const balances = (await api.get('/v1/balances')).json.items as Array<{ coin_id: string; available: string }>;
  t.is(balances.find((b) => b.coin_id === polygonUsdt)!.available, '4');
  t.is(balances.find((b) => b.coin_id === coinId('ethereum', eth.usdt))?.available ?? '0', '0');
});

test('a node on another network than the chain_id configured: the chain is not scanned, its coins are in maintenance', async (t) => {
  const { node, usdt } = await startAnvil();
  const td = await startTestDaemon({ chains: [anvilChainEntry(node.rpcUrl, usdt, { chain_id: 1, options: FAST_WATCH })], rates: RATES });
  t.teardown(() => td.stop());
  const status = td.daemon.chains.status()[0]!;
  t.like(status, { chain_id: 'ethereum', maintenance: true, scanned_height: null, last_error: 'evm node is on chain id 31337, the config says 1' });
  const m = await merchantWithKey(td.daemon);
  const res = await new SignedClient(td.url, m.keyId, m.secret).post(
    '/v1/invoices',
    { amount: '1', currency: 'ETH', coin_id: coinId('ethereum', 'native') },
    { headers: { 'Content-Type': 'application/json' } },
  );
  t.is(res.status, 503);
  t.is(res.json.error.code, 'unavailable');
});
