// Writes the integration groups that `npm test` runs (part of `npm run build`): every compiled
// integration file is in exactly one group, dist/test/groups/gNN.test.js, and a group runs its
// files one after another in one ava worker (test/helpers/file-group.ts says how, and why: a
// process costs this machine about 1.5 s of CPU before a file's first test).
// - The ALONE slowest files of scripts/test-order.mjs keep a process of their own, first; so do
//   the files that measure their own process (ownProcess there).
// - The other listed files go three to a group, in the list's order (the slower groups first).
// - The files not listed go SMALL to a group, in path order.
// The groups' names keep that order, so ava (ava.integration.config.mjs) starts the slowest first.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ownProcess, slowestFirst } from './test-order.mjs';

const ALONE = 20;
const LISTED = 3;
const SMALL = 6;

const root = path.join('dist', 'test');
const found = [];
const walk = (dir) => {
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) walk(rel);
    else if (e.name.endsWith('.test.js')) found.push(rel);
  }
};
walk('integration');
found.sort((a, b) => a.localeCompare(b, [], { numeric: true }));

const compiled = (list) => list.map((p) => `${p.replace(/^test\//, '')}.js`).filter((f) => found.includes(f));
const alone = compiled(ownProcess);
const listed = compiled(slowestFirst).filter((f) => !alone.includes(f));
const rest = found.filter((f) => !listed.includes(f) && !alone.includes(f));
const chunks = (files, n) => Array.from({ length: Math.ceil(files.length / n) }, (_, i) => files.slice(i * n, (i + 1) * n));
const groups = [...listed.slice(0, ALONE).map((f) => [f]), ...chunks(listed.slice(ALONE), LISTED), ...alone.map((f) => [f]), ...chunks(rest, SMALL)];

const out = path.join(root, 'groups');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const width = String(groups.length).length;
groups.forEach((files, i) => {
  const name = `g${String(i + 1).padStart(width, '0')}.test.js`;
  writeFileSync(
    path.join(out, name),
    `'use strict';\n// Written by scripts/write-test-groups.mjs (npm run build): these integration files, one after another in this worker.\n` +
      `require('../helpers/file-group.js').runGroup(require('node:path').join(__dirname, '..'), ${JSON.stringify(files, null, 2)});\n`,
  );
});
if (groups.flat().length !== found.length) throw new Error('write-test-groups: a file in no group or in two');
