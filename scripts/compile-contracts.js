// @ts-check
/**
 * Compiles the sandbox's Solidity contracts (src/dev/contracts) with solc and OpenZeppelin from
 * node_modules, offline, into dist/contracts/<Name>.json ({abi, bytecode, deployedBytecode}: the
 * latter lets a test put a contract's code in place of another's). Run by `npm run build`
 * before tsc; skipped when every artifact is newer than its source.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const sourceDir = path.join(root, 'src', 'dev', 'contracts');
const outDir = path.join(root, 'dist', 'contracts');

const sources = fs.readdirSync(sourceDir).filter((f) => f.endsWith('.sol'));
const artifact = (file) => path.join(outDir, file.replace(/\.sol$/, '.json'));
const stale = sources.filter((f) => !fs.existsSync(artifact(f)) || fs.statSync(artifact(f)).mtimeMs < fs.statSync(path.join(sourceDir, f)).mtimeMs);
if (stale.length === 0) process.exit(0);

const solc = require('solc');
const input = {
  language: 'Solidity',
  sources: Object.fromEntries(stale.map((f) => [f, { content: fs.readFileSync(path.join(sourceDir, f), 'utf8') }])),
  settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } } },
};
// Imports resolve only inside node_modules/@openzeppelin: nothing is fetched.
const findImports = (p) => {
  if (!p.startsWith('@openzeppelin/')) return { error: `import outside @openzeppelin: ${p}` };
  try {
    return { contents: fs.readFileSync(path.join(root, 'node_modules', p), 'utf8') };
  } catch {
    return { error: `not found: ${p}` };
  }
};
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
if (errors.length > 0) {
  for (const e of errors) process.stderr.write(e.formattedMessage + '\n');
  process.exit(1);
}
fs.mkdirSync(outDir, { recursive: true });
for (const f of stale) {
  const name = f.replace(/\.sol$/, '');
  const c = output.contracts[f][name];
  fs.writeFileSync(artifact(f), JSON.stringify({ contractName: name, compiler: `solc ${solc.version()}`, abi: c.abi, bytecode: '0x' + c.evm.bytecode.object, deployedBytecode: '0x' + c.evm.deployedBytecode.object }, null, 2) + '\n');
  process.stdout.write(`compiled ${f}\n`);
}
