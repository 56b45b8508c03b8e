// Writes the groups that `npm test` runs (part of `npm run build`): every compiled test file is in
// exactly one group, dist/test/groups/integration/gNN.test.js or dist/test/groups/unit/uNN.test.js,
// and a group runs its files one after another in one ava worker (test/helpers/file-group.ts says
// how, and why: a process costs this machine about 1.5 s of CPU before a file's first test, and a
// worker thread loads the modules of its file again).
// The unit files go UNIT to a group, in path order (worker threads, ava.unit.config.mjs). Of the
// integration files (processes, ava.integration.config.mjs):
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
const UNIT = 9;

const root = path.join('dist', 'test');
const testFiles = (dir) => {
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(path.join(root, d), { withFileTypes: true })) {
      const rel = `${d}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.test.js')) found.push(rel);
    }
  };
  walk(dir);
  return found.sort((a, b) => a.localeCompare(b, [], { numeric: true }));
};
const found = testFiles('integration');

const compiled = (list) => list.map((p) => `${p.replace(/^test\//, '')}.js`).filter((f) => found.includes(f));
const alone = compiled(ownProcess);
const listed = compiled(slowestFirst).filter((f) => !alone.includes(f));
const rest = found.filter((f) => !listed.includes(f) && !alone.includes(f));
const chunks = (files, n) => Array.from({ length: Math.ceil(files.length / n) }, (_, i) => files.slice(i * n, (i + 1) * n));
const groups = [...listed.slice(0, ALONE).map((f) => [f]), ...chunks(listed.slice(ALONE), LISTED), ...alone.map((f) => [f]), ...chunks(rest, SMALL)];

const out = path.join(root, 'groups');
rmSync(out, { recursive: true, force: true });
const write = (kind, prefix, list) => {
  mkdirSync(path.join(out, kind), { recursive: true });
  const width = String(list.length).length;
  list.forEach((files, i) => {
    writeFileSync(
      path.join(out, kind, `${prefix}${String(i + 1).padStart(width, '0')}.test.js`),
      `'use strict';\n// Written by scripts/write-test-groups.mjs (npm run build): these test files, one after another in this worker.\n` +
        `require('../../helpers/file-group.js').runGroup(require('node:path').join(__dirname, '..', '..'), ${JSON.stringify(files, null, 2)});\n`,
    );
  });
};
write('integration', 'g', groups);
if (groups.flat().length !== found.length) throw new Error('write-test-groups: an integration file in no group or in two');
write('unit', 'u', chunks(testFiles('unit'), UNIT));
