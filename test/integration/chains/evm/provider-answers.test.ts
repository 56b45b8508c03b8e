/**
 * How the EVM adapter reads what real nodes and hosted endpoints answer where anvil would not
 * (issue 30 §1), through the provider emulator in front of anvil: a rate limit (HTTP 429 with a
 * JSON body and Retry-After) and a refused connection are NodeUnavailable, never a node's word on
 * a transaction; geth's "transaction indexing is in progress" is "not known yet" for that lookup
 * only, the rest of the batch answered; Infura's 10,000-result cap shrinks the log range; a node
 * without archive state answers StateUnavailable for old balances and the newest ones still read.
 */
import test from 'ava';
import { EvmAdapter } from '../../../../src/chains/evm/evm-adapter';
import { EvmRpc } from '../../../../src/chains/evm/json-rpc';
import { NodeUnavailable, StateUnavailable } from '../../../../src/chains/types';
import { parseConfig } from '../../../../src/config/schema';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../../helpers/anvil';
import { EvmProvider } from '../../../helpers/evm-provider';

test.after.always(killAllAnvils);

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const { node, usdt } = await startAnvil();
  const provider = await EvmProvider.start(node.rpcUrl);
  t.teardown(async () => {
    await provider.stop();
    await node.kill();
  });
  const chain = parseConfig({ chains: [anvilChainEntry(provider.url, usdt, { options: { rpc_timeout_ms: 5000 } })] }).chains[0]!;
  return { node, usdt, provider, chain, adapter: new EvmAdapter(chain) };
}

test('an HTTP 429 with a JSON body is NodeUnavailable, rate limited, with Retry-After; a broadcast meeting it is not refused', async (t) => {
  const { provider, adapter } = await setup(t);
  provider.set({ rateLimit: { fraction: 1, retryAfterSeconds: 7 } });
  const err = await t.throwsAsync(adapter.tip());
  t.true(err instanceof NodeUnavailable);
  t.like(err, { rateLimited: true, retryAfterMs: 7000 });
  t.regex(err!.message, /^evm node .*rate limited \(HTTP 429/);
  const sent = await t.throwsAsync(adapter.broadcast('0x02f86b827a6980843b9aca00847735940082520894'));
  t.true(sent instanceof NodeUnavailable, 'never TransactionRefused');
  const all = await t.throwsAsync(adapter.broadcastAll(['0x01', '0x02']));
  t.true(all instanceof NodeUnavailable, 'a batch of broadcasts meeting a rate limit reports no refusal');
});

test('a refused connection is NodeUnavailable naming the method, never the URL', async (t) => {
  const { provider, adapter } = await setup(t);
  await provider.refuse();
  const err = await t.throwsAsync(adapter.tip());
  t.true(err instanceof NodeUnavailable);
  t.regex(err!.message, /^evm node eth_\w+: unreachable \(ECONNREFUSED\)$/);
});

test('geth indexing: lookups it cannot answer yet read as not known, the mined ones in the same batch are answered', async (t) => {
  const { node, provider, adapter } = await setup(t);
  const mined = await payFromAnvil(node, 'native', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', '0.01', 18);
  const unknown = `0x${'ab'.repeat(32)}`;
  provider.set({ indexing: true });
  const [a, b] = await adapter.receipts([mined, unknown]);
  t.truthy(a);
  t.true(a!.succeeded);
  t.is(b, null);
  // The sender's nonce has passed 0, yet an unknown lookup concludes nothing.
  const payer = (await node.rpc<{ from: string }>('eth_getTransactionByHash', [mined])).from;
  t.deepEqual(await adapter.sendStates([{ txid: unknown, from: payer, nonce: 0 }]), ['unknown']);
});

test('a log range refused for its number of results (Infura) is asked again in smaller ranges', async (t) => {
  const { node, usdt, provider, chain } = await setup(t);
  for (let i = 0; i < 4; i++) await payFromAnvil(node, usdt, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', '1', 6);
  const rpc = new EvmRpc(provider.url, 5000, { logsRange: 100 });
  provider.set({ logsResults: 1 });
  const tip = await node.blockNumber();
  const logs = await rpc.getLogs<{ transactionHash: string }>({ address: [usdt] }, 0, tip);
  t.true(logs.length >= 4);
  t.true(provider.counts.logsRefused > 0);
  t.true(rpc.logsLimit.value < 100);
  t.truthy(chain);
});

test('a node without archive state: old balances are StateUnavailable, the newest still read', async (t) => {
  const { node, provider, adapter } = await setup(t);
  await node.mine(20);
  provider.set({ stateWindow: 8 });
  const who = ['0x9858EfFD232B4033E47d90003D41EC34EcaEda94'];
  const err = await t.throwsAsync(adapter.balancesAt(who, ['native'], 2));
  t.true(err instanceof StateUnavailable);
  t.regex(err!.message, /no state at block 2/);
  t.deepEqual((await adapter.balancesAt(who, ['native'], null)).length, 1);
  t.is((await adapter.balancesAt(who, ['native'], (await node.blockNumber()) - 2)).length, 1);
});

test("a nonce's transaction is read from the block bodies while lookups by hash answer null: found in its block, null while unused, unnamed when used before the blocks looked at", async (t) => {
  const { node, provider, adapter } = await setup(t);
  const to = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
  const first = await payFromAnvil(node, 'native', to, '0.01', 18);
  await node.mine(3);
  const second = await payFromAnvil(node, 'native', to, '0.01', 18);
  const tx = await node.rpc<{ from: string; nonce: string; blockNumber: string }>('eth_getTransactionByHash', [second]);
  const height = Number(tx.blockNumber);
  await node.mine(2);
  provider.set({ hidden: new Set([first.toLowerCase(), second.toLowerCase()]) });
  t.is(await adapter.receipts([second]).then((r) => r[0]), null, 'the lookup by hash knows nothing');
  const nonce = Number(tx.nonce);
  const tip = height + 2;
  t.deepEqual(await adapter.nonceHolder(tx.from, nonce, 0, tip), { txid: second, height });
  t.deepEqual(await adapter.nonceHolder(tx.from, nonce, height, tip), { txid: second, height });
  t.is(await adapter.nonceHolder(tx.from, nonce + 1, 0, tip), null, 'not used yet');
  t.deepEqual(await adapter.nonceHolder(tx.from, nonce - 1, height, tip), { txid: null, height: height - 1 }, 'used before the window');
});
