import test from 'ava';
import { parseConfig } from '../../../src/config/schema';

const evm = (options?: unknown) =>
  parseConfig({ chains: [{ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', options }] }).chains[0]!;

test("a chain's core options default to a reorganisation depth of 64 and a fresh cursor at the node's tip", (t) => {
  t.deepEqual(evm().watch, { reorg_max_depth: 64, poll_interval_ms: 3000, batch_size: 100, start_height: null, stall_seconds: 600, rpc_timeout_ms: 10000 });
  const btc = parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443' }] }).chains[0]!;
  t.like(btc.watch, { poll_interval_ms: 10000, batch_size: 10, stall_seconds: 7200 });
});

test("a chain's core options are read from its `options`", (t) => {
  t.deepEqual(evm({ reorg_max_depth: 12, poll_interval_ms: 250, batch_size: 500, start_height: 0, stall_seconds: 0, rpc_timeout_ms: 2000 }).watch, {
    reorg_max_depth: 12,
    poll_interval_ms: 250,
    batch_size: 500,
    start_height: 0,
    stall_seconds: 0,
    rpc_timeout_ms: 2000,
  });
});

for (const [options, message] of [
  [{ reorg_max_depth: 0 }, 'chains[0].options.reorg_max_depth: must be an integer from 1 to 10000'],
  [{ poll_interval_ms: 'fast' }, 'chains[0].options.poll_interval_ms: must be an integer from 50 to 3600000'],
  [{ batch_size: 1001 }, 'chains[0].options.batch_size: must be an integer from 1 to 1000'],
  [{ start_height: -1 }, 'chains[0].options.start_height: must be an integer from 0 to 2147483647'],
  [{ stall_seconds: 1.5 }, 'chains[0].options.stall_seconds: must be an integer from 0 to 604800'],
  [{ rpc_timeout_ms: 10 }, 'chains[0].options.rpc_timeout_ms: must be an integer from 100 to 600000'],
  [{ reorg_depth: 10 }, 'chains[0].options.reorg_depth: unknown key'],
  ['deep', 'chains[0].options: must be a mapping'],
] as const) {
  test(`a bad chain option is refused at load with one line: ${message}`, (t) => {
    t.throws(() => evm(options), { message });
  });
}

const tron = (extra: Record<string, unknown>) =>
  parseConfig({ chains: [{ id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:8090', ...extra }] }).chains[0]!;

test('a tron chain takes an optional api_key and base58 token contracts', (t) => {
  const chain = tron({ api_key: 'k-1', confirmations: 19, tokens: [{ ticker: 'USDT', contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 }] });
  t.like(chain, { api_key: 'k-1', confirmations: 19, native: { ticker: 'TRX', decimals: 6 } });
  t.is(tron({}).api_key, undefined);
});

for (const [chain, message] of [
  [
    {
      id: 'tron',
      kind: 'tron',
      full_node_url: 'http://127.0.0.1:8090',
      tokens: [{ ticker: 'USDT', contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 }],
    },
    'chains[0].tokens[0].contract: must be a base58 Tron address (T...)',
  ],
  [{ id: 'tron', kind: 'tron' }, 'chains[0].full_node_url: is required'],
  [{ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', api_key: 'k' }, 'chains[0].api_key: is for tron chains only'],
] as const) {
  test(`a bad tron setting is refused at load with one line: ${message}`, (t) => {
    t.throws(() => parseConfig({ chains: [chain] }), { message });
  });
}
