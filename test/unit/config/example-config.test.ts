/**
 * config/coinkeep.example.yaml and config/dev.yaml are valid, and the example documents every key
 * the schema reads (found by watching which keys parseConfig asks for, so new keys are caught).
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { configFromText } from '../../../src/config/load';
import { parseConfig } from '../../../src/config/schema';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const read = (f: string) => readFileSync(path.join(ROOT, 'config', f), 'utf8');

/** Wraps a plain value so every key read (present or not) is recorded as a dotted path. */
function watched(value: unknown, at: string, seen: Set<string>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return new Proxy(value as object, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || (Array.isArray(target) && !/^\d+$/.test(key))) return v;
      const p = Array.isArray(target) ? `${at}[]` : at ? `${at}.${key}` : key;
      if (!Array.isArray(target)) seen.add(p);
      return watched(v, p, seen);
    },
  });
}

/** A config that reaches every branch: each chain kind, each rate source kind, chain options. */
const EXERCISE = {
  chains: [
    { id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:18443', options: {} },
    {
      id: 'ethereum',
      kind: 'evm',
      chain_id: 31337,
      rpc_url: 'http://127.0.0.1:8545',
      native: { ticker: 'ETH', decimals: 18 },
      tokens: [{ ticker: 'USDT', contract: '0x1', decimals: 6 }],
    },
    { id: 'tron', kind: 'tron', full_node_url: 'http://127.0.0.1:8090', api_key: 'k' },
  ],
  rates: {
    sources: [
      { kind: 'fixed', rates: { BTC: { USD: '1' } } },
      { kind: 'coinbase', url: 'http://127.0.0.1:1' },
    ],
  },
};

test('the example config and the sandbox config are valid', (t) => {
  const example = configFromText(read('coinkeep.example.yaml'));
  t.is(example.network, 'testnet');
  t.is(example.listen.port, 8420);
  const dev = configFromText(read('dev.yaml'));
  t.is(dev.network, 'testnet');
  t.true(
    dev.rates.sources.every((s) => s.kind === 'fixed'),
    'the sandbox makes no outside calls for rates',
  );
  t.not(dev.data_dir, example.data_dir, 'the sandbox has its own data dir');
  t.not(dev.listen.port, example.listen.port);
});

test('the example config documents every key the schema reads', (t) => {
  const seen = new Set<string>();
  parseConfig(watched(JSON.parse(JSON.stringify(EXERCISE)), '', seen));
  const example = read('coinkeep.example.yaml');
  // The fixed source's tickers and fiats are data, not keys.
  const keys = [...seen]
    .filter((p) => !p.startsWith('rates.sources[].rates.'))
    .map((p) =>
      p
        .split(/\.|\[\]\.?/)
        .filter(Boolean)
        .at(-1)!,
    );
  t.true(keys.length > 30, `saw ${keys.length} keys`);
  const missing = [...new Set(keys)].filter((k) => !new RegExp(`(^|[\\s{,#])${k}:`, 'm').test(example));
  t.deepEqual(missing, [], `keys not documented in config/coinkeep.example.yaml: ${missing.join(', ')}`);
  // Every line that sets something carries a comment, on it or right above it.
  const lines = example.split('\n');
  lines.forEach((line, i) => {
    if (!/^\s*[a-z_]+:/.test(line) && !/^\s*- /.test(line)) return;
    const commented = line.includes('#') || /^\s*#/.test(lines[i - 1] ?? '') || /^\s*(- )?[a-z_]+:\s*$/.test(line) || /^\s*- \{/.test(line);
    t.true(commented, `line ${i + 1} has no comment: ${line}`);
  });
  void YAML;
});
