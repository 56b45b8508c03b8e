import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { adminCall } from '../../../src/cli/admin-client';
import { startDaemon } from '../../../src/daemon/main';
import { MetaEntity } from '../../../src/db/entities/team';
import { loadMasterKey, Sealer } from '../../../src/db/seal';
import { Store } from '../../../src/db/store';
import { createLogger } from '../../../src/shared/logger';
import { UserError } from '../../../src/shared/errors';
import { cells } from '../../../src/db/sealed-values';
import { LEGACY_SEED_META_KEY } from '../../../src/wallet/seed';
import { signerBackupWords } from '../../../src/wallet/signer-process/main';
import { ensureSeed, loadSigner, loadSignerKey, SIGNER_SEED_META_KEY as SEED_META_KEY } from '../../../src/wallet/signer-process/vault';
import { startTestDaemon, testConfig, TEST_MNEMONIC } from '../../helpers/daemon';
import { tempStore } from '../../helpers/memory-store';

const run = promisify(execFile);
const CLI = path.resolve(__dirname, '../../../src/cli/main.js');
const OTHER = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

const tempDir = (t: { teardown(fn: () => void): void }) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-wallet-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

test('a fresh seed is 24 words, sealed at rest, kept on a second call', async (t) => {
  const store = await tempStore(t);
  const sealer = new Sealer(Buffer.alloc(32, 7));
  const first = await ensureSeed(store, sealer);
  t.is(first.status, 'created');
  t.regex(first.fingerprint, /^[0-9a-f]{8}$/);
  const row = await store.read.findOneByOrFail(MetaEntity, { key: SEED_META_KEY });
  const signer = await loadSigner(store, sealer);
  const words = signer.backupWords().split(' ');
  t.is(words.length, 24);
  for (const w of words) t.false(row.value.includes(w), 'no word of the seed in the stored row');
  t.deepEqual(await ensureSeed(store, sealer), { status: 'kept', fingerprint: first.fingerprint });
  t.is((await store.read.findOneByOrFail(MetaEntity, { key: SEED_META_KEY })).value, row.value);
});

test('restore: given words are stored; the same words again are kept; other words are refused and change nothing', async (t) => {
  const store = await tempStore(t);
  const sealer = new Sealer(Buffer.alloc(32, 1));
  t.deepEqual(await ensureSeed(store, sealer, ` ${TEST_MNEMONIC.toUpperCase()} \n`), { status: 'restored', fingerprint: '73c5da0a' });
  t.is((await ensureSeed(store, sealer, TEST_MNEMONIC)).status, 'kept');
  const row = await store.read.findOneByOrFail(MetaEntity, { key: SEED_META_KEY });
  const err = await t.throwsAsync(ensureSeed(store, sealer, OTHER), { instanceOf: UserError });
  t.regex(err!.message, /different wallet seed is already stored \(fingerprint 73c5da0a\)/);
  t.false(err!.message.includes('legal'));
  await t.throwsAsync(ensureSeed(store, sealer, 'abandon abandon abandon'), { message: /not a valid BIP39 mnemonic/ });
  t.deepEqual(await store.read.findOneByOrFail(MetaEntity, { key: SEED_META_KEY }), row);
});

test('loading: a missing seed and one sealed under another signer key each fail with one line and no secret', async (t) => {
  const store = await tempStore(t);
  await t.throwsAsync(loadSigner(store, new Sealer(Buffer.alloc(32, 2))), { instanceOf: UserError, message: /^wallet seed missing: run `coinkeep init`/ });
  await ensureSeed(store, new Sealer(Buffer.alloc(32, 2)), TEST_MNEMONIC);
  const err = await t.throwsAsync(loadSigner(store, new Sealer(Buffer.alloc(32, 3))), { instanceOf: UserError });
  t.is(err!.message, 'wallet seed cannot be opened: wrong signer key or damaged seed row');
  await store.write((em) => em.update(MetaEntity, { key: SEED_META_KEY }, { value: 'v1.garbage' }));
  await t.throwsAsync(loadSigner(store, new Sealer(Buffer.alloc(32, 2))), { message: /cannot be opened/ });
});

test('the daemon refuses to start when its signer cannot (no signer key, then no seed), with one line, and closes its store', async (t) => {
  const dir = tempDir(t);
  const config = testConfig(dir);
  loadMasterKey(dir, { create: true });
  const lines: string[] = [];
  await t.throwsAsync(startDaemon(config, { logger: createLogger({ write: (l) => lines.push(l) }) }), {
    instanceOf: UserError,
    message: /^the signer did not start: signer key .* not found \(run: coinkeep init\)/,
  });
  loadSignerKey(dir, { create: true });
  await t.throwsAsync(startDaemon(config, { logger: createLogger({ write: (l) => lines.push(l) }) }), {
    instanceOf: UserError,
    message: /^the signer did not start: wallet seed missing/,
  });
  // The store was closed: it opens again at once and the API port was never taken.
  const store = await Store.open({ url: config.database.url });
  await store.close();
  t.pass();
});

test("a seed stored under the master key moves to the signer key at the signer's first start; the daemon shows the fingerprint only, the words come from the signer key in the operator's shell, never the log", async (t) => {
  const dir = tempDir(t);
  // The child logs at the config's level: all of it, to see its lines reach the daemon's log.
  const config = testConfig(dir, { log_level: 'debug' });
  const master = new Sealer(loadMasterKey(dir, { create: true }));
  loadSignerKey(dir, { create: true });
  const store = await Store.open({ url: config.database.url });
  await store.migrate();
  // As an install before the signer stored it.
  await store.write((em) => em.insert(MetaEntity, { key: LEGACY_SEED_META_KEY, value: master.seal(TEST_MNEMONIC, cells.walletSeed()) }));
  await store.close();
  const lines: string[] = [];
  // No in-process signer: the daemon starts the real child (bin/coinkeep signer).
  const daemon = await startDaemon(config, { logger: createLogger({ level: 'debug', write: (l) => lines.push(l) }) });
  t.teardown(() => daemon.stop());
  t.is(daemon.wallet.fingerprint, '73c5da0a');
  t.like(daemon.signerStatus(), { mode: 'child', up: true, fingerprint: '73c5da0a' });
  const rows = await daemon.store.read.find(MetaEntity);
  t.false(
    rows.some((r) => r.key === LEGACY_SEED_META_KEY),
    'the old row is gone',
  );
  const moved = rows.find((r) => r.key === SEED_META_KEY)!;
  t.throws(() => master.open(moved.value, { table: 'meta', column: 'value', row: SEED_META_KEY }), undefined, 'the master key does not open it');
  const info = await adminCall(dir, 'GET', '/admin/wallet');
  t.deepEqual(info, { fingerprint: '73c5da0a', chains: [] });
  const backup = await t.throwsAsync(adminCall(dir, 'POST', '/admin/wallet/backup', {}));
  t.regex(String(backup!.message), /no route for POST \/admin\/wallet\/backup/, 'the daemon cannot show the words');
  // The CLI reads the words with the signer key, in this shell, and prints them numbered.
  const file = path.join(dir, 'coinkeep.yaml');
  writeFileSync(file, YAML.stringify({ data_dir: dir, chains: [], rates: { sources: [] } }));
  const { stdout } = await run(process.execPath, [CLI, '--config', file, 'signer', 'backup']);
  t.regex(stdout, /fingerprint 73c5da0a, 12 words/);
  t.regex(stdout, / 1\. abandon .* 4\. abandon\n/);
  t.regex(stdout, /12\. about\n/);
  t.regex((await run(process.execPath, [CLI, '--config', file, 'wallet', 'backup'])).stdout, /fingerprint 73c5da0a, 12 words/);
  t.true(
    lines.some((l) => l.includes('wallet seed sealed under the signer key')),
    "the child's log reaches the daemon's",
  );
  t.false(
    lines.some((l) => l.includes('abandon')),
    'the mnemonic is never logged',
  );
});

test('startTestDaemon comes with the fixed test seed', async (t) => {
  const td = await startTestDaemon();
  t.teardown(() => td.stop());
  t.is((await signerBackupWords(td.daemon.config)).words, TEST_MNEMONIC);
  t.is(td.daemon.wallet.fingerprint, '73c5da0a');
  t.like(td.daemon.signerStatus(), { mode: 'in_process', up: true });
  t.is(td.daemon.watched.size(), 0);
});

test('CLI: init creates a seed (0600 master key and database), init --restore refuses other words; a restore elsewhere gives the same fingerprint', async (t) => {
  const dir = tempDir(t);
  const dataDir = path.join(dir, 'data');
  const file = path.join(dir, 'coinkeep.yaml');
  writeFileSync(file, YAML.stringify({ network: 'testnet', data_dir: dataDir, listen: { host: '127.0.0.1', port: 0 }, chains: [], rates: { sources: [] } }));
  const env = { ...process.env, COINKEEP_MASTER_KEY: '' };
  const cli = (args: string[], input?: string) => {
    const p = run(process.execPath, [CLI, '--config', file, '--json', ...args], { env });
    if (input !== undefined) p.child.stdin!.end(input);
    else p.child.stdin!.end();
    return p;
  };
  const init = JSON.parse((await cli(['init'])).stdout);
  t.like(init, { wallet_seed: 'created' });
  t.regex(init.wallet_fingerprint, /^[0-9a-f]{8}$/);
  t.is(statSync(path.join(dataDir, 'master.key')).mode & 0o777, 0o600);
  t.is(statSync(path.join(dataDir, 'signer.key')).mode & 0o777, 0o600, 'init makes both keys');
  t.is(statSync(path.join(dataDir, 'coinkeep.db')).mode & 0o777, 0o600, 'the database holding the sealed seed too');
  t.like(JSON.parse((await cli(['init'])).stdout), { wallet_seed: 'kept', wallet_fingerprint: init.wallet_fingerprint });
  const err = await t.throwsAsync(cli(['init', '--restore'], `${OTHER}\n`));
  t.regex((err as unknown as { stderr: string }).stderr, /^\{"error":\{"code":"cli_error","message":"a different wallet seed is already stored/);
  t.false((err as unknown as { stderr: string }).stderr.includes('legal'));
  // A second install restored from the first one's words has the same fingerprint.
  const dir2 = tempDir(t);
  const file2 = path.join(dir2, 'coinkeep.yaml');
  writeFileSync(file2, YAML.stringify({ network: 'testnet', data_dir: path.join(dir2, 'data'), chains: [], rates: { sources: [] } }));
  const restored = run(process.execPath, [CLI, '--config', file2, '--json', 'init', '--restore'], { env });
  restored.child.stdin!.end(TEST_MNEMONIC);
  t.like(JSON.parse((await restored).stdout), { wallet_seed: 'restored', wallet_fingerprint: '73c5da0a' });
  const again = run(process.execPath, [CLI, '--config', file2, '--json', 'init', '--restore', '--first-branch', '500'], { env });
  again.child.stdin!.end(TEST_MNEMONIC);
  t.like(JSON.parse((await again).stdout), { wallet_seed: 'kept', wallet_next_branch: 500 });
  const bad = await t.throwsAsync(cli(['init', '--first-branch', '-1']));
  t.regex((bad as unknown as { stderr: string }).stderr, /--first-branch must be an integer/);
});
