/**
 * `coinkeep init --preset NAME` through the real binary: on a kept config it leaves the file alone
 * and gives the chain entry, which parses back into the preset's chain; an unknown name, or a
 * preset of the other network, fails with one line and creates nothing.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { EVM_PRESET_NAMES } from '../../../src/chains/evm/presets';
import { configFromText } from '../../../src/config/load';
import { CliEnv } from '../../helpers/cli';

const env = new CliEnv({ network: 'mainnet' });
test.after.always(() => env.cleanup());

test.serial('an unknown preset, or one of the other network, fails in one line naming --preset, and creates nothing', async (t) => {
  const before = readFileSync(env.configFile, 'utf8');
  for (const [args, message] of [
    [['init', '--preset', 'bnb'], `--preset: unknown preset "bnb": must be one of ${EVM_PRESET_NAMES.join(', ')}`],
    [['init', '--preset', 'sepolia'], "--preset sepolia is a testnet network and this install's network is mainnet"],
  ] as const) {
    const r = await env.run([...args]);
    t.not(r.code, 0);
    t.is(r.stdout, '');
    t.is(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    t.true(r.stderr.includes(message), r.stderr);
  }
  t.false(existsSync(env.dataDir), 'nothing was created');
  t.is(readFileSync(env.configFile, 'utf8'), before);
});

test.serial('init --preset base on a kept config gives the Base entry, which parses back into the Base chain', async (t) => {
  const before = readFileSync(env.configFile, 'utf8');
  const r = await env.run(['--json', 'init', '--preset', 'base', '--rpc-url', 'http://127.0.0.1:9545']);
  t.is(r.code, 0, r.stderr);
  t.like(r.json, { config_written: false, network: 'mainnet', preset: 'base', chain_written: false });
  t.is(readFileSync(env.configFile, 'utf8'), before, 'a kept config is not edited');
  const [chain] = configFromText(`chains:\n${r.json.chain_block}`).chains;
  t.like(chain, { id: 'base', kind: 'evm', preset: 'base', chain_id: 8453, confirmations: 30, rpc_url: 'http://127.0.0.1:9545' });
  t.is(chain!.evm!.fee_model, 'op-stack');
  t.deepEqual(
    chain!.tokens.map((x) => [x.ticker, x.contract, x.decimals]),
    [['USDC', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 6]],
  );

  const human = await env.run(['init', '--preset', 'base']);
  t.is(human.code, 0, human.stderr);
  t.true(
    human.stdout.includes(`chain: base is not in the kept config; add this entry under chains: in ${env.configFile}:\n  # Base: chain id 8453`),
    human.stdout,
  );
  t.regex(human.stdout, /^ {2}- preset: base\n {4}rpc_url: "http:\/\/127\.0\.0\.1:8545"/m);
});
