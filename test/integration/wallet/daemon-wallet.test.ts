import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { coinId, NATIVE_ASSET } from '../../../src/catalog/coins';
import { adminCall } from '../../../src/cli/admin-client';
import { startDaemon } from '../../../src/daemon/main';
import { loadMasterKey } from '../../../src/db/seal';
import { silentLogger } from '../../../src/shared/logger';
import { prepareSeed } from '../../../src/wallet/signer-process/main';
import { testConfig, TEST_MNEMONIC } from '../../helpers/daemon';

const CHAINS = [
  { id: 'ethereum', kind: 'evm', chain_id: 31337, rpc_url: 'http://127.0.0.1:9' },
  { id: 'bitcoin', kind: 'btc', network: 'signet', rpc_url: 'http://127.0.0.1:9' },
];

test('the daemon allocates through daemon.addresses, answers wallet info, and watches every address again after a restart', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-wallet-daemon-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = testConfig(dir, { chains: CHAINS });
  loadMasterKey(dir, { create: true });
  await prepareSeed(config, TEST_MNEMONIC);

  let daemon = await startDaemon(config, { logger: silentLogger });
  const { account } = await daemon.team.createAccount('Shop', 'owner@example.com');
  const eth = await daemon.store.write((em) =>
    daemon.addresses.allocate(em, { accountId: account.id, coinId: coinId('ethereum', NATIVE_ASSET), purpose: 'invoice' }),
  );
  const btc = await daemon.store.write((em) =>
    daemon.addresses.allocate(em, { accountId: account.id, coinId: coinId('bitcoin', NATIVE_ASSET), purpose: 'invoice' }),
  );
  t.is(eth.address, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  t.is(btc.address, 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl');
  t.is(daemon.watched.lookup('ethereum', eth.address), eth.id);

  t.deepEqual(await adminCall(dir, 'GET', '/admin/wallet'), {
    fingerprint: '73c5da0a',
    chains: [
      { chain_id: 'ethereum', kind: 'evm', path: "m/44'/60'/{branch}'/0/{index}" },
      { chain_id: 'bitcoin', kind: 'btc', path: "m/84'/1'/{branch}'/0/{index}" },
    ],
  });
  t.deepEqual(await adminCall(dir, 'GET', `/admin/wallet/branches/${account.id}`), { account_id: account.id, branch: 0 });
  await t.throwsAsync(adminCall(dir, 'GET', '/admin/wallet/branches/88888888-8888-4888-8888-888888888888'), { message: /\[not_found\]$/ });
  await daemon.stop();

  daemon = await startDaemon(config, { logger: silentLogger });
  t.teardown(() => daemon.stop());
  t.is(daemon.watched.size(), 2);
  t.is(daemon.watched.lookup('bitcoin', btc.address), btc.id);
  const next = await daemon.store.write((em) =>
    daemon.addresses.allocate(em, { accountId: account.id, coinId: coinId('ethereum', NATIVE_ASSET), purpose: 'static' }),
  );
  t.like(next, { derivation_path: "m/44'/60'/0'/0/1", purpose: 'static' });
});
