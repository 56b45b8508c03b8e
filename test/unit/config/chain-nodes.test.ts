import test from 'ava';
import { parseConfig } from '../../../src/config/schema';

const chain = (entry: Record<string, unknown>) => parseConfig({ chains: [{ id: 'c', ...entry }] }).chains[0]!;

test('rpc_url and rpc_urls make the endpoints in order, each a URL or {url, requests_per_day}; defaults: quorum 1, maintenance after 60 s', (t) => {
  const c = chain({
    kind: 'evm',
    chain_id: 1,
    rpc_url: 'http://127.0.0.1:8545',
    rpc_urls: ['https://a.example/v3/KEY', { url: 'https://b.example', requests_per_day: 100000 }],
  });
  t.deepEqual(c.nodes.endpoints, [
    { url: 'http://127.0.0.1:8545', requests_per_day: null },
    { url: 'https://a.example/v3/KEY', requests_per_day: null },
    { url: 'https://b.example', requests_per_day: 100000 },
  ]);
  t.like(c.nodes, { quorum: 1, maintenance_after_seconds: 60, max_batch: 100, logs_range: 100 });
  t.is(c.rpc_url, 'http://127.0.0.1:8545');
  t.is(chain({ kind: 'evm', chain_id: 1, rpc_urls: ['https://a.example'] }).rpc_url, 'https://a.example');
});

test('stale_after_seconds defaults by kind on public networks and is off for chains mined on demand', (t) => {
  t.is(chain({ kind: 'btc', network: 'mainnet', rpc_url: 'http://127.0.0.1:8332' }).nodes.stale_after_seconds, 7200);
  t.is(chain({ kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443' }).nodes.stale_after_seconds, null);
  t.is(chain({ kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545' }).nodes.stale_after_seconds, 300);
  t.is(chain({ kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:8545' }).nodes.stale_after_seconds, null);
  t.is(chain({ kind: 'evm', chain_id: 1337, rpc_url: 'http://127.0.0.1:8545' }).nodes.stale_after_seconds, null);
  // Tron without `network` is mainnet; the sandbox's private chain is known by its own genesis block.
  t.is(chain({ kind: 'tron', full_node_url: 'https://api.trongrid.io' }).nodes.stale_after_seconds, 120);
  t.is(chain({ kind: 'tron', full_node_url: 'http://127.0.0.1:8090', options: { genesis_block_id: 'ab'.repeat(32) } }).nodes.stale_after_seconds, null);
  t.is(chain({ kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', stale_after_seconds: 30 }).nodes.stale_after_seconds, 30);
  t.is(chain({ kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', stale_after_seconds: false }).nodes.stale_after_seconds, null);
});

for (const [entry, message] of [
  [{ kind: 'evm', chain_id: 1 }, 'chains[0].rpc_url: is required'],
  [{ kind: 'evm', chain_id: 1, rpc_urls: ['ftp://a.example'] }, 'chains[0].rpc_urls[0].url: must be an http(s) URL'],
  [{ kind: 'evm', chain_id: 1, rpc_urls: [{ url: 'https://a.example', api_key: 'k' }] }, 'chains[0].rpc_urls[0].api_key: unknown key'],
  [{ kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', quorum: 2 }, 'chains[0].quorum: must be at most the number of endpoints (1)'],
  [
    { kind: 'tron', full_node_urls: [{ url: 'https://api.trongrid.io', requests_per_day: 0 }] },
    'chains[0].full_node_urls[0].requests_per_day: must be an integer from 1 to 1000000000',
  ],
] as const) {
  test(`a bad endpoint setting is refused naming its key: ${message}`, (t) => {
    t.throws(() => chain(entry as Record<string, unknown>), { message });
  });
}

test('ws_url: an evm chain may name its node WebSocket endpoint (new heads pushed); refused elsewhere and when not ws(s)', (t) => {
  t.is(chain({ kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', ws_url: 'ws://127.0.0.1:8545' }).ws_url, 'ws://127.0.0.1:8545');
  t.is(chain({ kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545' }).ws_url, undefined);
  t.throws(() => chain({ kind: 'evm', chain_id: 1, rpc_url: 'http://127.0.0.1:8545', ws_url: 'http://127.0.0.1:8545' }), {
    message: 'chains[0].ws_url: must be a ws(s) URL',
  });
  t.throws(() => chain({ kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443', ws_url: 'ws://127.0.0.1:1' }), {
    message: 'chains[0].ws_url: is for evm chains only',
  });
});
