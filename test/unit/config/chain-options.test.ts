import test from 'ava';
import { parseConfig } from '../../../src/config/schema';

const evm = (options?: unknown) => parseConfig({ chains: [{ id: 'ethereum', kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', options }] }).chains[0]!;

test('a chain\'s core options default to a reorganisation depth of 64 and a fresh cursor at the node\'s tip', (t) => {
  t.deepEqual(evm().watch, { reorg_max_depth: 64, poll_interval_ms: 3000, batch_size: 100, start_height: null, stall_seconds: 600, rpc_timeout_ms: 10000 });
  const btc = parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443' }] }).chains[0]!;
  t.like(btc.watch, { poll_interval_ms: 10000, batch_size: 10, stall_seconds: 7200 });
});

test('a chain\'s core options are read from its `options`', (t) => {
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
