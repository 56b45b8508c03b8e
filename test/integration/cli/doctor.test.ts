/**
 * `coinkeep doctor` (PRODUCT §15): against the sandbox's own config (anvil, bcoin, the Tron
 * stand-in) every chain works and exit code 0, with a line per finding; against a broken config
 * (a node that refuses connections, a node of another chain id) exit code non-zero with the
 * reason and what to change.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { sandboxConfigPath } from '../../../src/dev/sandbox';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { sandboxEnv, sandboxStarted } from '../../helpers/sandbox';
import { TcpGate } from '../../helpers/tcp-gate';

const env = sandboxEnv();

test.after.always(() => env.cleanup());

test.serial('doctor on the sandbox: every chain ok, exit code 0; on a broken config: exit code non-zero, the reason and what to change', async (t) => {
  const dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
  await sandboxStarted(dev);
  const sandbox = sandboxConfigPath(env.dataDir);

  const ok = await runBin(COINKEEP_BIN, ['--config', sandbox, 'doctor'], { timeoutMs: 60_000 });
  t.log(ok.stdout);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stdout, /^ethereum \(evm\): ok$/m);
  t.regex(ok.stdout, /^base \(evm\): ok$/m);
  t.regex(ok.stdout, /^bitcoin \(btc\): ok$/m);
  t.regex(ok.stdout, /^tron \(tron\): ok$/m);
  t.regex(ok.stdout, /chain id 31337, tip \d+, answered in \d+ ms/);
  t.regex(ok.stdout, /staleness not watched: a chain mined on demand/);
  t.regex(ok.stdout, /a batch of 100 calls \(max_batch\): accepted/);
  t.regex(ok.stdout, /eth_getLogs over 100 blocks \(logs_range\): accepted/);
  t.regex(ok.stdout, /network regtest, tip \d+/);
  t.regex(ok.stdout, /history queries open/);
  const json = await runBin(COINKEEP_BIN, ['--config', sandbox, '--json', 'doctor'], { timeoutMs: 60_000 });
  t.is(json.code, 0);
  t.deepEqual(
    (JSON.parse(json.stdout) as { chains: Array<{ chain_id: string; works: boolean }> }).chains.map((c) => [c.chain_id, c.works]),
    [
      ['ethereum', true],
      ['base', true],
      ['bitcoin', true],
      ['tron', true],
    ],
  );

  // Broken: the EVM chain's node refuses connections, and a second EVM chain says another chain id than its node.
  const refusing = new TcpGate(1);
  await refusing.open();
  await refusing.close();
  const config = YAML.parse(readFileSync(sandbox, 'utf8')) as { chains: Array<Record<string, unknown>> };
  const evm = config.chains.find((c) => c.kind === 'evm')!;
  const wrongId = { ...evm, id: 'other', chain_id: 1, rpc_url: evm.rpc_url };
  evm.rpc_url = `http://user:s3cret@127.0.0.1:${refusing.port}/v3/KEY123`;
  const broken = path.join(env.dir, 'broken.yaml');
  writeFileSync(broken, YAML.stringify({ ...config, chains: [...config.chains, wrongId] }));
  const bad = await runBin(COINKEEP_BIN, ['--config', broken, 'doctor'], { timeoutMs: 60_000 });
  t.log(bad.stdout, bad.stderr);
  t.not(bad.code, 0);
  t.regex(bad.stdout, /^ethereum \(evm\): CANNOT WORK: 0 usable endpoint\(s\) of 1$/m);
  t.regex(bad.stdout, /problem: no answer: evm node eth_\w+: unreachable/);
  t.regex(bad.stdout, /change: check the URL/);
  t.regex(bad.stdout, /^other \(evm\): CANNOT WORK/m);
  t.regex(bad.stdout, /problem: wrong network: evm node is on chain id 31337, the config says 1/);
  t.regex(bad.stdout, /^bitcoin \(btc\): ok$/m);
  t.regex(bad.stderr, /doctor: ethereum, other cannot work/);
  t.false(`${bad.stdout}${bad.stderr}`.includes('s3cret') || `${bad.stdout}${bad.stderr}`.includes('KEY123'), 'no credentials or key printed');
});
