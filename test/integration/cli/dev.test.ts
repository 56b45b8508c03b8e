/**
 * `coinkeep dev`: the sandbox starts in the foreground, prints its base URL, the demo account, a
 * ck_test_ key with its secret and a signed curl example that works when run; Ctrl-C stops it.
 * It runs with config/dev.yaml's settings, moved to a temp data dir and a free port.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { CliEnv, COINKEEP_BIN, PROJECT_ROOT } from '../../helpers/cli';
import { signRequest } from '../../helpers/signer';

const devYaml = YAML.parse(readFileSync(path.join(PROJECT_ROOT, 'config', 'dev.yaml'), 'utf8')) as Record<string, unknown>;
const env = new CliEnv();
env.writeConfig({
  ...devYaml,
  data_dir: env.dataDir,
  listen: { host: '127.0.0.1', port: 0 },
  database: { url: `sqlite:${path.join(env.dataDir, 'coinkeep.db')}` },
});

test.after.always(() => env.cleanup());

function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { timeout: 15000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let first: { account: string; key: string; secret: string } | undefined;

test.serial('dev prints the base URL, demo account, test key and a signed curl example that works; Ctrl-C stops it', async (t) => {
  const dev = env.spawn(COINKEEP_BIN, ['dev']);
  await dev.waitFor(/public catalogue:/, 20000);
  const out = dev.stdout;
  const baseUrl = out.match(/base URL\s+(http:\/\/127\.0\.0\.1:\d+)/)![1]!;
  const account = out.match(/account\s+([0-9a-f-]{36})/)![1]!;
  const key = out.match(/test key\s+(ck_test_[0-9A-Za-z]{24})/)![1]!;
  const secret = out.match(/secret\s+([A-Za-z0-9_-]{43})/)![1]!;
  t.regex(out, /owner\s+owner@demo\.coinkeep\.test \(TOTP secret [A-Z2-7]{32}\)/);
  first = { account, key, secret };

  // The example, exactly as printed: from the KEY= line to the curl line.
  const lines = out.split('\n');
  const from = lines.findIndex((l) => l.startsWith('KEY='));
  const to = lines.findIndex((l, i) => i > from && l.startsWith('curl '));
  t.true(from >= 0 && to > from, out);
  const example = lines.slice(from, to + 1).join('\n');
  const ran = await bash(example);
  t.is(ran.code, 0, ran.stderr);
  const answer = JSON.parse(ran.stdout);
  t.is(answer.default, 'USD');
  t.true(answer.items.some((f: { code: string }) => f.code === 'JPY'), ran.stdout);

  // The key is a ck_test_ key with every permission but withdraw.
  const target = '/v1/account/api-keys';
  const res = await fetch(baseUrl + target, { headers: signRequest({ keyId: key, secret, method: 'GET', target }) });
  t.is(res.status, 200);
  const listed = ((await res.json()) as { items: Array<{ key_id: string; permissions: string[]; withdraw_status: string }> }).items;
  const demoKey = listed.find((k) => k.key_id === key)!;
  t.deepEqual([...demoKey.permissions].sort(), ['create_address', 'create_invoice', 'read']);
  t.is(demoKey.withdraw_status, 'none');
  t.is((await fetch(`${baseUrl}/v1/currencies`)).status, 200);

  const stopped = await dev.stop('SIGINT');
  t.is(stopped.code, 0, dev.stderr);
  t.true(stopped.ms < 10000, `stopped in ${stopped.ms} ms`);
  t.is(dev.stderr, '');
  t.false(existsSync(path.join(env.dataDir, 'coinkeepd.pid')));
  await t.throwsAsync(fetch(`${baseUrl}/healthz`));
  t.is(statSync(path.join(env.dataDir, 'demo.json')).mode & 0o777, 0o600);
});

test.serial('dev --json prints one JSON object; the demo account and key are kept across restarts', async (t) => {
  const dev = env.spawn(COINKEEP_BIN, ['--json', 'dev']);
  const line = (await dev.waitFor(/^\{.*\}\n/m, 20000))[0];
  const info = JSON.parse(line);
  t.like(info, { account_id: first!.account, key_id: first!.key, key_secret: first!.secret, owner_email: 'owner@demo.coinkeep.test' });
  t.regex(info.base_url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.true(info.curl_example.includes(info.base_url));
  const stopped = await dev.stop('SIGTERM');
  t.is(stopped.code, 0);
});
