/**
 * The daemon that serves HTTP never reaches the seed's unsealing (issue 36 §1): loading every module
 * of the daemon, the API and the admin socket, and starting a daemon against a signer run apart,
 * loads none of src/wallet/signer-process (the vault) nor WalletSigner. The import check
 * (only-the-signer-opens-the-seed) holds the same at build time.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { testConfig } from '../../helpers/daemon';
import { prepareSeed } from '../../../src/wallet/signer-process/main';
import { runSigner } from '../../../src/wallet/signer-process/main';
import { TEST_MNEMONIC } from '../../helpers/test-mnemonic';
import { loadMasterKey } from '../../../src/db/seal';

const run = promisify(execFile);
const DIST_SRC = path.resolve(__dirname, '../../../src');

test("a daemon started against a signer run apart loads no module that can open the seed, and derives its addresses from the signer's public keys", async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-noseed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const socket = path.join(dir, 'apart.sock');
  const config = testConfig(dir, { signer: { socket } });
  loadMasterKey(dir, { create: true });
  await prepareSeed(config, TEST_MNEMONIC);
  const signer = await runSigner(config, { socketPath: socket, memoryJournal: true });
  t.teardown(() => signer.close());
  const modules = ['daemon', 'admin', 'http'].flatMap((d) =>
    readdirSync(path.join(DIST_SRC, d))
      .filter((f) => f.endsWith('.js'))
      .map((f) => path.join(DIST_SRC, d, f)),
  );
  const script = `
    const files = ${JSON.stringify(modules)};
    for (const f of files) require(f);
    const { startDaemon } = require(${JSON.stringify(path.join(DIST_SRC, 'daemon', 'main.js'))});
    const { configFromText } = require(${JSON.stringify(path.join(DIST_SRC, 'config', 'load.js'))});
    (async () => {
      const d = await startDaemon(configFromText(process.argv[1]), {});
      const fingerprint = d.wallet.fingerprint;
      const up = d.signerStatus();
      await d.stop();
      const seedModules = () => Object.keys(require.cache).filter((k) => /wallet[\\\\/](signer-process[\\\\/]|signer\\.js$)/.test(k));
      const loaded = seedModules();
      // The control: the same look finds the vault once it is loaded.
      require(${JSON.stringify(path.join(DIST_SRC, 'wallet', 'signer-process', 'vault.js'))});
      process.stdout.write(JSON.stringify({ fingerprint, mode: up.mode, up: up.up, loaded, control: seedModules().length }));
      process.exit(0);
    })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
  `;
  const { stdout } = await run(process.execPath, ['-e', script, JSON.stringify(config, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))], {
    env: { ...process.env, COINKEEP_SIGNER_KEY: '' },
    timeout: 120_000,
  });
  const r = JSON.parse(stdout);
  t.like(r, { fingerprint: '73c5da0a', mode: 'socket', up: true });
  t.deepEqual(r.loaded, [], 'no module of the seed loaded in the daemon');
  t.true(r.control >= 2, 'the check sees the vault and WalletSigner when they are loaded');
});
