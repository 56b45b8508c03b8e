// The chain-family check of `npm test` (issue 31 §1): outside src/chains/ (the families and their
// registry), src/config/ (the config parser) and src/dev/ (the sandbox's nodes), no code branches on
// the chain family. It finds a comparison with a family's name (`kind === 'evm'`, `'btc' !== family`),
// a `case 'tron':`, and an `instanceof` of an adapter or rail class; ask the family instead
// (familyOf in src/chains/families.ts, payoutsOf in src/chains/payout-families.ts).
// Usage: node scripts/check-kind-switches.mjs [DIR] (default: src); the exit code is the number of hits.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = process.argv[2] ?? 'src';
const ALLOWED = /^(chains|config|dev)(\/|$)/;
const FAMILY = "['\"`](?:btc|evm|tron)['\"`]";
const SWITCHES = [
  { what: 'a comparison with a chain family', re: new RegExp(`[!=]==?\\s*${FAMILY}|${FAMILY}\\s*[!=]==?`) },
  { what: 'a case of a chain family', re: new RegExp(`\\bcase\\s+${FAMILY}\\s*:`) },
  { what: 'an instanceof of an adapter or rail', re: /\binstanceof\s+\w*(?:Adapter|Rail)\b/ },
];

const hits = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    const rel = path.relative(root, file).split(path.sep).join('/');
    if (entry.isDirectory()) {
      if (!ALLOWED.test(rel)) walk(file);
    } else if (/\.(ts|tsx)$/.test(entry.name)) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const found = SWITCHES.find((s) => s.re.test(line));
          if (found) hits.push(`${path.join(root, rel)}:${i + 1}: ${found.what}: ${line.trim()}`);
        });
    }
  }
};
walk(root);
for (const hit of hits) process.stdout.write(`  error ${hit}\n`);
process.stdout.write(hits.length === 0 ? '✔ no switch on the chain family outside src/chains, src/config and src/dev\n' : `\nx ${hits.length} switch(es) on the chain family: ask familyOf(kind) / payoutsOf(kind) instead\n`);
process.exitCode = Math.min(hits.length, 255);
