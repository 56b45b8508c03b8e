/**
 * `chains[].preset` (PRODUCT §17): a built-in EVM network fills the chain id, the native coin, the
 * confirmations, the fee model and the USDT and USDC contracts; any field given overrides it.
 * Config text in, ChainConfig out.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getAddress } from 'ethers';
import { EVM_FEE_MODELS, EVM_PRESET_NAMES, EVM_PRESETS } from '../../../src/chains/evm/presets';
import { configFromText } from '../../../src/config/load';

const chainOf = (yaml: string) => configFromText(`chains:\n${yaml}`).chains;

test('a preset alone (with its node) fills the chain: id, chain id, native coin, confirmations, fee model, USDT and USDC', (t) => {
  const [bsc] = chainOf('  - { preset: bsc, rpc_url: "http://127.0.0.1:8545" }');
  t.like(bsc, { id: 'bsc', kind: 'evm', preset: 'bsc', chain_id: 56, confirmations: 15, rpc_url: 'http://127.0.0.1:8545' });
  t.deepEqual(bsc!.native, { ticker: 'BNB', decimals: 18, name: 'BNB', invoice_enabled: true });
  t.is(bsc!.evm!.fee_model, 'legacy');
  t.deepEqual(bsc!.tokens, [
    {
      ticker: 'USDT',
      contract: '0x55d398326f99059fF775485246999027B3197955',
      decimals: 18,
      name: 'Tether USD',
      invoice_enabled: true,
      decimals_key: 'chains[0].preset',
    },
    {
      ticker: 'USDC',
      contract: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      decimals: 18,
      name: 'USD Coin',
      invoice_enabled: true,
      decimals_key: 'chains[0].preset',
    },
  ]);
});

test('the table: every built-in network and figure as docs/chains-evm.md lists them', (t) => {
  const row = (name: string) => {
    const p = EVM_PRESETS[name]!;
    return [p.chain_id, p.native.ticker, p.native.decimals, p.confirmations, p.fee_model, p.tokens.map((x) => `${x.ticker}/${x.decimals}`).join(' ')];
  };
  t.deepEqual(Object.fromEntries(EVM_PRESET_NAMES.map((n) => [n, row(n)])), {
    ethereum: [1, 'ETH', 18, 12, 'eip1559', 'USDT/6 USDC/6'],
    base: [8453, 'ETH', 18, 30, 'op-stack', 'USDC/6'],
    arbitrum: [42161, 'ETH', 18, 20, 'arbitrum', 'USDT/6 USDC/6'],
    optimism: [10, 'ETH', 18, 30, 'op-stack', 'USDT/6 USDC/6'],
    polygon: [137, 'POL', 18, 64, 'eip1559', 'USDT/6 USDC/6'],
    bsc: [56, 'BNB', 18, 15, 'legacy', 'USDT/18 USDC/18'],
    avalanche: [43114, 'AVAX', 18, 1, 'eip1559', 'USDT/6 USDC/6'],
    sepolia: [11155111, 'ETH', 18, 12, 'eip1559', 'USDC/6'],
    'base-sepolia': [84532, 'ETH', 18, 30, 'op-stack', 'USDC/6'],
    'arbitrum-sepolia': [421614, 'ETH', 18, 20, 'arbitrum', 'USDC/6'],
    'optimism-sepolia': [11155420, 'ETH', 18, 30, 'op-stack', 'USDC/6'],
    'polygon-amoy': [80002, 'POL', 18, 64, 'eip1559', 'USDC/6'],
    'bsc-testnet': [97, 'BNB', 18, 15, 'legacy', ''],
    'avalanche-fuji': [43113, 'AVAX', 18, 1, 'eip1559', 'USDC/6'],
  });
});

test("every preset's contracts are EIP-55 addresses as their issuers write them, distinct, and each parses into a chain", (t) => {
  const seen = new Set<string>();
  for (const name of EVM_PRESET_NAMES) {
    const p = EVM_PRESETS[name]!;
    t.true(EVM_FEE_MODELS.includes(p.fee_model), name);
    t.true(p.confirmations <= 64, `${name}: confirmations within the default reorg_max_depth`);
    for (const token of p.tokens) {
      t.is(getAddress(token.contract), token.contract, `${name} ${token.ticker}`);
      t.false(seen.has(`${p.chain_id}:${token.contract}`));
      seen.add(`${p.chain_id}:${token.contract}`);
    }
    const [chain] = chainOf(`  - { preset: ${name}, rpc_url: "http://127.0.0.1:8545" }`);
    t.like(chain, { id: name, chain_id: p.chain_id, confirmations: p.confirmations });
    t.deepEqual(
      chain!.tokens.map((x) => [x.ticker, x.contract, x.decimals]),
      p.tokens.map((x) => [x.ticker, x.contract, x.decimals]),
    );
  }
  t.is(new Set(EVM_PRESET_NAMES.map((n) => EVM_PRESETS[n]!.chain_id)).size, EVM_PRESET_NAMES.length);
});

test('fields given override the preset: id, chain id (a local node), confirmations, native coin, fee model', (t) => {
  const [chain] = chainOf(
    [
      '  - id: bsc-local',
      '    preset: bsc',
      '    chain_id: 31337',
      '    rpc_url: "http://127.0.0.1:8545"',
      '    confirmations: 2',
      '    native: { name: Binance Coin, invoice_enabled: false }',
      '    fee_model: eip1559',
    ].join('\n'),
  );
  t.like(chain, { id: 'bsc-local', preset: 'bsc', chain_id: 31337, confirmations: 2 });
  t.deepEqual(chain!.native, { ticker: 'BNB', decimals: 18, name: 'Binance Coin', invoice_enabled: false });
  t.is(chain!.evm!.fee_model, 'eip1559');
  // A local chain id is still a chain mined on demand: no staleness.
  t.is(chain!.nodes.stale_after_seconds, null);
  t.is(chain!.tokens.length, 2);
});

test("tokens merge into the preset's by ticker: a field given overrides that token's, omit leaves it out, another ticker is added", (t) => {
  const [chain] = chainOf(
    [
      '  - preset: ethereum',
      '    rpc_url: "http://127.0.0.1:8545"',
      '    tokens:',
      '      - { ticker: USDC, invoice_enabled: false, name: Circle USD }',
      '      - { ticker: USDT, omit: true }',
      '      - { ticker: DAI, contract: "0x6B175474E89094C44Da98b954EedeAC495271d0F", decimals: 18 }',
    ].join('\n'),
  );
  t.deepEqual(chain!.tokens, [
    {
      ticker: 'USDC',
      contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      decimals: 6,
      name: 'Circle USD',
      invoice_enabled: false,
      decimals_key: 'chains[0].preset',
    },
    {
      ticker: 'DAI',
      contract: '0x6B175474E89094C44Da98b954EedeAC495271d0F',
      decimals: 18,
      name: undefined,
      invoice_enabled: true,
      decimals_key: 'chains[0].tokens[2].decimals',
    },
  ]);
});

test("a preset token's contract of its own needs its own decimals; given decimals are the key a mismatch names", (t) => {
  t.throws(
    () =>
      chainOf('  - { preset: sepolia, rpc_url: "http://127.0.0.1:8545", tokens: [{ ticker: USDC, contract: "0x1111111111111111111111111111111111111111" }] }'),
    {
      message: 'chains[0].tokens[0].decimals: is required',
    },
  );
  const [chain] = chainOf(
    '  - { preset: sepolia, rpc_url: "http://127.0.0.1:8545", tokens: [{ ticker: USDC, contract: "0x1111111111111111111111111111111111111111", decimals: 18 }] }',
  );
  t.deepEqual(chain!.tokens, [
    {
      ticker: 'USDC',
      contract: '0x1111111111111111111111111111111111111111',
      decimals: 18,
      name: 'USD Coin',
      invoice_enabled: true,
      decimals_key: 'chains[0].tokens[0].decimals',
    },
  ]);
});

test('two networks from presets sit side by side, each with its own coins', (t) => {
  const chains = chainOf('  - { preset: base, rpc_url: "http://127.0.0.1:8545" }\n  - { preset: arbitrum, rpc_url: "http://127.0.0.1:8546" }');
  t.deepEqual(
    chains.map((c) => [c.id, c.chain_id, c.evm!.fee_model, c.tokens.map((x) => x.ticker)]),
    [
      ['base', 8453, 'op-stack', ['USDC']],
      ['arbitrum', 42161, 'arbitrum', ['USDT', 'USDC']],
    ],
  );
});

test('without a preset an evm chain is as before: chain_id required, fee model eip1559, no tokens', (t) => {
  const [chain] = chainOf('  - { id: ethereum, kind: evm, chain_id: 1, rpc_url: "http://127.0.0.1:8545" }');
  t.is(chain!.evm!.fee_model, 'eip1559');
  t.deepEqual(chain!.tokens, []);
  t.is(chain!.preset, undefined);
  t.is(chain!.confirmations, 1);
  t.throws(() => chainOf('  - { id: ethereum, kind: evm, rpc_url: "http://127.0.0.1:8545" }'), { message: 'chains[0].chain_id: is required for evm chains' });
});

const known = EVM_PRESET_NAMES.join(', ');
for (const [yaml, message] of [
  ['{ preset: bnb, rpc_url: "http://127.0.0.1:8545" }', `chains[0].preset: unknown preset "bnb": must be one of ${known}`],
  ['{ preset: toString, rpc_url: "http://127.0.0.1:8545" }', `chains[0].preset: unknown preset "toString": must be one of ${known}`],
  ['{ id: tron, kind: tron, preset: ethereum, full_node_url: "http://127.0.0.1:8090" }', 'chains[0].preset: is for evm chains only'],
  ['{ preset: base, rpc_url: "http://127.0.0.1:8545", fee_model: eip4844 }', 'chains[0].fee_model: must be one of eip1559, legacy, op-stack, arbitrum'],
  ['{ id: bitcoin, kind: btc, network: regtest, rpc_url: "http://127.0.0.1:18443", fee_model: legacy }', 'chains[0].fee_model: is for evm chains only'],
  [
    '{ preset: base, rpc_url: "http://127.0.0.1:8545", tokens: [{ ticker: USDT, omit: true }] }',
    'chains[0].tokens[0].omit: is for a token of the preset only (its tokens: USDC)',
  ],
  [
    '{ preset: base, rpc_url: "http://127.0.0.1:8545", tokens: [{ ticker: USDC, omit: true, decimals: 6 }] }',
    'chains[0].tokens[0].omit: leaves the token out: give no other field with it',
  ],
  [
    '{ preset: base, rpc_url: "http://127.0.0.1:8545", tokens: [{ ticker: USDC, name: A }, { ticker: USDC, name: B }] }',
    'chains[0].tokens[1].ticker: USDC of the preset is given twice',
  ],
  ['{ preset: base }', 'chains[0].rpc_url: is required'],
] as const) {
  test(`a bad preset entry is refused at load with one line naming the key: ${message.slice(0, 60)}`, (t) => {
    t.throws(() => chainOf(`  - ${yaml}`), { message });
  });
}

test('fee_model is read for every evm chain and given explicitly wins over the preset', (t) => {
  for (const model of EVM_FEE_MODELS) {
    const [chain] = chainOf(`  - { id: x, kind: evm, chain_id: 5, rpc_url: "http://127.0.0.1:8545", fee_model: ${model} }`);
    t.is(chain!.evm!.fee_model, model);
    const [preset] = chainOf(`  - { preset: base, rpc_url: "http://127.0.0.1:8545", fee_model: ${model} }`);
    t.is(preset!.evm!.fee_model, model);
  }
});

test("the example config's two preset networks parse as the comments say", (t) => {
  const example = readFileSync(path.join(__dirname, '..', '..', '..', '..', 'config', 'coinkeep.example.yaml'), 'utf8').split('\n');
  const from = example.findIndex((l) => l.startsWith('#  - { preset: base'));
  const to = example.findIndex((l, i) => i > from && l.startsWith('#  - { id: tron'));
  t.true(from > 0 && to > from);
  const chains = chainOf(
    example
      .slice(from, to)
      .map((l) => l.slice(1))
      .join('\n'),
  );
  t.deepEqual(
    chains.map((c) => [c.id, c.chain_id, c.confirmations, c.evm!.fee_model, c.tokens.map((x) => `${x.ticker}/${x.decimals}`)]),
    [
      ['base', 8453, 30, 'op-stack', ['USDC/6']],
      ['bsc', 56, 20, 'legacy', ['USDT/18']],
    ],
  );
});

test("docs/chains-evm.md's table of built-in networks is the presets' table", (t) => {
  const doc = readFileSync(path.join(__dirname, '..', '..', '..', '..', 'docs', 'chains-evm.md'), 'utf8');
  const rows = doc
    .split('\n')
    .filter((l) => /^\| `[a-z-]+` \| \d+ \|/.test(l))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  const token = (cell: string) => (cell === 'none' ? null : /^`(0x[0-9a-fA-F]{40})` \(\**(\d+)\**/.exec(cell)!.slice(1, 3).join('/'));
  t.deepEqual(
    rows.map(([name, id, native, confirmations, fee, usdt, usdc]) => [
      name!.replace(/`/g, ''),
      Number(id),
      native,
      Number(confirmations),
      fee,
      token(usdt!),
      token(usdc!),
    ]),
    EVM_PRESET_NAMES.map((name) => {
      const p = EVM_PRESETS[name]!;
      const of = (ticker: string) => {
        const x = p.tokens.find((k) => k.ticker === ticker);
        return x ? `${x.contract}/${x.decimals}` : null;
      };
      return [name, p.chain_id, p.native.ticker, p.confirmations, p.fee_model, of('USDT'), of('USDC')];
    }),
  );
});
