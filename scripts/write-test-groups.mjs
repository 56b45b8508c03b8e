// Writes the groups that `npm test` runs (part of `npm run build`): every compiled test file is in
// exactly one group, dist/test/groups/integration/gNN.test.js or dist/test/groups/unit/uNN.test.js,
// and a group runs its files one after another in one ava worker (test/helpers/file-group.ts says
// how, docs/testing.md "Groups" why: a worker's start and modules are paid once per group).
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
const testFiles = (dir) =>
  readdirSync(path.join(root, dir), { recursive: true })
    .filter((f) => f.endsWith('.test.js'))
    .map((f) => `${dir}/${f.split(path.sep).join('/')}`)
    .sort((a, b) => a.localeCompare(b, [], { numeric: true }));
const found = testFiles('integration');

const compiled = (list) => list.map((p) => `${p.replace(/^test\//, '')}.js`).filter((f) => found.includes(f));
const own = compiled(ownProcess);
const listed = compiled(slowestFirst).filter((f) => !own.includes(f));
const rest = found.filter((f) => !listed.includes(f) && !own.includes(f));
const chunks = (files, n) => Array.from({ length: Math.ceil(files.length / n) }, (_, i) => files.slice(i * n, (i + 1) * n));
const groups = [...listed.slice(0, ALONE).map((f) => [f]), ...chunks(listed.slice(ALONE), LISTED), ...own.map((f) => [f]), ...chunks(rest, SMALL)];

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
