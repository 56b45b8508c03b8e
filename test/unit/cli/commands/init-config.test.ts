/**
 * `coinkeep init --preset NAME`: the chain entry it writes, parsed back as the daemon reads it;
 * the network it goes with; an unknown name.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EVM_PRESET_NAMES, EVM_PRESETS } from '../../../../src/chains/evm/presets';
import { initConfigText, initNetwork, presetChainBlock } from '../../../../src/cli/commands/init-config';
import { configFromText } from '../../../../src/config/load';

const example = readFileSync(path.join(__dirname, '..', '..', '..', '..', '..', 'config', 'coinkeep.example.yaml'), 'utf8');

test('a new config from `init --preset base` is the example with the Base chain in it, on mainnet', (t) => {
  const wanted = initNetwork(undefined, 'base', undefined);
  t.is(wanted.network, 'mainnet');
  const config = configFromText(initConfigText(example, wanted.network, wanted.preset));
  t.is(config.network, 'mainnet');
  t.is(config.chains.length, 1);
  t.like(config.chains[0], { id: 'base', preset: 'base', chain_id: 8453, confirmations: 30, rpc_url: 'http://127.0.0.1:8545' });
  t.is(config.chains[0]!.evm!.fee_model, 'op-stack');
  t.deepEqual(
    config.chains[0]!.tokens.map((x) => [x.ticker, x.contract, x.decimals]),
    [['USDC', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 6]],
  );
  // The rest of the example is as it was.
  const plain = configFromText(initConfigText(example, 'mainnet', undefined));
  t.deepEqual({ ...config, chains: [] }, plain);
});

test('every preset writes an entry that parses back into that network, with the node given', (t) => {
  for (const name of EVM_PRESET_NAMES) {
    const wanted = initNetwork(undefined, name, 'https://node.example/rpc?key=abc');
    t.is(wanted.network, EVM_PRESETS[name]!.testnet ? 'testnet' : 'mainnet');
    const block = presetChainBlock(wanted.preset!);
    const [chain] = configFromText(`chains:\n${block}`).chains;
    t.like(chain, { id: name, chain_id: EVM_PRESETS[name]!.chain_id, rpc_url: 'https://node.example/rpc?key=abc' }, name);
  }
});

for (const [args, message] of [
  [[undefined, 'bnb', undefined], `--preset: unknown preset "bnb": must be one of ${EVM_PRESET_NAMES.join(', ')}`],
  [
    ['testnet', 'base', undefined],
    "--preset base is a mainnet network and this install's network is testnet: give a testnet preset, or --network mainnet for a new install",
  ],
  [
    ['mainnet', 'base-sepolia', undefined],
    "--preset base-sepolia is a testnet network and this install's network is mainnet: give a mainnet preset, or --network testnet for a new install",
  ],
  [[undefined, undefined, 'http://127.0.0.1:8545'], '--rpc-url goes with --preset'],
  [['moonnet', undefined, undefined], '--network must be testnet or mainnet'],
] as const) {
  test(`init refuses: ${message.slice(0, 50)}`, (t) => {
    t.throws(() => initNetwork(...(args as unknown as [string | undefined, string | undefined, string | undefined])), { message });
  });
}

test('a node URL that is no http(s) URL is refused by the same check as the config', (t) => {
  const wanted = initNetwork(undefined, 'sepolia', 'ftp://node');
  t.throws(() => presetChainBlock(wanted.preset!), { message: 'chains[0].rpc_url: must be an http(s) URL' });
});
