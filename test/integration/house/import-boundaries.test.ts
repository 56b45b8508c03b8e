import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { PROJECT_ROOT } from '../../../src/config/load';

const CHECK = path.join(PROJECT_ROOT, 'scripts', 'check-imports.mjs');

/** Runs the import check of `npm test` over a small tree of files in a temporary directory (the project's packages linked in, so they resolve). */
async function checkTree(files: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-imports-'));
  try {
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    return await new Promise((resolve) => {
      execFile(process.execPath, [CHECK, '--config', path.join(PROJECT_ROOT, '.dependency-cruiser.cjs'), 'src'], { cwd: dir }, (err, stdout, stderr) => {
        resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr });
      });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const exportNothing = 'export const x = 1;\n';

test('imports that follow the direction of the house pass the check', async (t) => {
  const r = await checkTree({
    'src/shared/amount.ts': exportNothing,
    'src/db/store.ts': "import { x } from '../shared/amount';\nexport const y = x;\n",
    'src/ledger/ledger.ts': "import { y } from '../db/store';\nexport const z = y;\n",
    'src/invoices/invoice.service.ts': "import { z } from '../ledger/ledger';\nimport { q } from '../shared/query';\nexport const s = z + q;\n",
    'src/shared/query.ts': 'export const q = 2;\n',
    'src/invoices/invoice.routes.ts': "import { s } from './invoice.service';\nimport { app } from '../http/app';\nexport const r = s + app;\n",
    'src/http/app.ts': exportNothing.replace('x', 'app'),
    'src/admin/contract.ts': "import { s } from '../invoices/invoice.service';\nexport type S = typeof s;\n",
    'src/daemon/main.ts': "import { r } from '../invoices/invoice.routes';\nexport const d = r;\n",
    'src/cli/main.ts': "import { d } from '../daemon/main';\nimport type { S } from '../admin/contract';\nexport const c: S = d;\n",
    'src/chains/btc/parse.ts': "import { Transaction } from 'bitcoinjs-lib';\nexport const T = Transaction;\n",
    'src/wallet/signer.ts': "import { Wallet } from 'ethers';\nexport const W = Wallet;\n",
    'src/wallet/hd.ts': "import { BIP32Factory } from 'bip32';\nexport const B = BIP32Factory;\n",
    'src/dev/anvil.ts': "import { JsonRpcProvider } from 'ethers';\nexport const P = JsonRpcProvider;\n",
  });
  t.is(r.code, 0, r.out);
});

test('an import against the direction, a chain SDK in domain code and typeorm in routes each fail the check', async (t) => {
  const r = await checkTree({
    'src/shared/amount.ts': "import { d } from '../daemon/main';\nexport const x = d;\n",
    'src/daemon/main.ts': exportNothing.replace('x', 'd'),
    'src/ledger/ledger.ts': "import { s } from '../invoices/invoice.service';\nexport const z = s;\n",
    'src/invoices/invoice.service.ts': "import { Wallet } from 'ethers';\nimport { page } from '../http/pagination';\nexport const s = [Wallet, page];\n",
    'src/http/pagination.ts': exportNothing.replace('x', 'page'),
    'src/money/money.service.ts': "import { job } from '../jobs/job';\nexport const m = job;\n",
    'src/jobs/job.ts': exportNothing.replace('x', 'job'),
    'src/webhooks/webhook.routes.ts': "import { DataSource } from 'typeorm';\nexport const D = DataSource;\n",
    'src/admin/server.ts': "import { d } from '../daemon/main';\nexport const a = d;\n",
    'src/cli/ledger.ts': "import { z } from '../ledger/ledger';\nexport const c = z;\n",
    'src/wallet/hd.ts': "import { Transaction } from 'bitcoinjs-lib';\nexport const T = Transaction;\n",
    'src/auth/signature.ts': "import { mnemonicToSeedSync } from 'bip39';\nexport const M = mnemonicToSeedSync;\n",
  });
  t.is(r.code, 11, r.out);
  for (const line of [
    'shared-is-the-floor: src/shared/amount.ts → src/daemon/main.ts',
    'foundations-import-no-domain: src/ledger/ledger.ts → src/invoices/invoice.service.ts',
    'domains-import-no-outer-layer: src/invoices/invoice.service.ts → src/http/pagination.ts',
    'domains-import-no-outer-layer: src/money/money.service.ts → src/jobs/job.ts',
    'chain-sdk-only-in-chains-and-signer: src/invoices/invoice.service.ts',
    'chain-sdk-only-in-chains-and-signer: src/wallet/hd.ts',
    'key-sdk-only-in-chains-and-wallet: src/auth/signature.ts',
    'routes-import-no-typeorm: src/webhooks/webhook.routes.ts',
    'http-jobs-admin-import-no-daemon: src/admin/server.ts → src/daemon/main.ts',
    'cli-reads-the-admin-contract: src/cli/ledger.ts → src/ledger/ledger.ts',
  ]) {
    t.true(r.out.includes(line), `${line}\n${r.out}`);
  }
});

test("a family's presets are data the config parser and the CLI may read, and they import nothing of src/", async (t) => {
  const ok = await checkTree({
    'src/chains/evm/presets.ts': 'export const PRESETS = {};\n',
    'src/config/schema.ts': "import { PRESETS } from '../chains/evm/presets';\nexport const s = PRESETS;\n",
    'src/cli/init.ts': "import { PRESETS } from '../chains/evm/presets';\nimport { s } from '../config/schema';\nexport const i = [PRESETS, s];\n",
  });
  t.is(ok.code, 0, ok.out);
  const bad = await checkTree({
    'src/shared/amount.ts': exportNothing,
    'src/chains/evm/gas.ts': exportNothing.replace('x', 'gas'),
    'src/chains/evm/presets.ts': "import { x } from '../../shared/amount';\nexport const PRESETS = x;\n",
    'src/config/schema.ts': "import { PRESETS } from '../chains/evm/presets';\nimport { gas } from '../chains/evm/gas';\nexport const s = [PRESETS, gas];\n",
    'src/cli/init.ts': "import { gas } from '../chains/evm/gas';\nexport const i = gas;\n",
  });
  t.is(bad.code, 3, bad.out);
  for (const line of [
    'presets-are-data: src/chains/evm/presets.ts → src/shared/amount.ts',
    'config-and-db-import-only-shared: src/config/schema.ts → src/chains/evm/gas.ts',
    'cli-reads-the-admin-contract: src/cli/init.ts → src/chains/evm/gas.ts',
  ]) {
    t.true(bad.out.includes(line), `${line}\n${bad.out}`);
  }
});
