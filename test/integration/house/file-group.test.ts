/**
 * The group runner of `npm test` (test/helpers/file-group.ts) keeps each member file as if it ran
 * alone: its `before` hooks first, its serial tests one at a time in order, then its other tests at
 * once, its teardowns, then its `after.always` hooks; the next file only after that, with the
 * environment as it was. A failing `before` fails that file's tests (and runs none of them), a
 * failing `after.always` fails the group, and the same title in two files is two tests.
 * Run by ava itself, in a temporary project with this one's node_modules linked.
 */
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../helpers/cli';

const MEMBERS: Record<string, string> = {
  'a.js': `
test.before(async () => { await pause(30); process.env.FG_A = 'set'; log('a before'); });
test.serial('s1', async (t) => { await pause(30); log('a s1'); t.pass(); });
test.serial('s2', (t) => { log('a s2'); t.pass(); });
test('c1', async (t) => { log('a c1 start'); await pause(60); log('a c1 end'); t.pass(); });
test('c2', async (t) => { t.teardown(() => log('a c2 teardown')); log('a c2 start'); await pause(60); log('a c2 end'); t.pass(); });
test.after.always(async () => { await pause(30); log('a after'); });`,
  'b.js': `
test.before(() => log('b before, FG_A ' + (process.env.FG_A ?? 'unset')));
test('same title', (t) => { log('b test'); t.pass(); });
test.after.always(() => log('b after'));`,
  'c.js': `
test.before(() => { throw new Error('c before broke'); });
test('same title', (t) => { log('c test ran'); t.pass(); });
test.after.always(() => log('c after'));`,
  'd.js': `
test('passes', (t) => { log('d test'); t.pass(); });
test.after.always(() => { log('d after'); throw new Error('d cleanup broke'); });`,
};

/** Runs ava in a temporary project on one group of `members` (file name: body); what it printed, its exit code and the log. */
async function runFixtureGroup(
  t: ExecutionContext,
  members: Record<string, string>,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; out: string; lines: string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-file-group-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), '{ "name": "file-group-fixture", "private": true }\n');
  writeFileSync(path.join(dir, 'ava.config.mjs'), "export default { files: ['group.test.js'], timeout: '60s' };\n");
  mkdirSync(path.join(dir, 'members'));
  const prelude =
    "const test = require('ava');\nconst log = (s) => require('node:fs').appendFileSync(process.env.FG_LOG, s + '\\n');\n" +
    'const pause = (ms) => new Promise((r) => setTimeout(r, ms));\n';
  for (const [name, body] of Object.entries(members)) writeFileSync(path.join(dir, 'members', name), prelude + body);
  const runner = path.join(PROJECT_ROOT, 'dist', 'test', 'helpers', 'file-group.js');
  const names = Object.keys(members).map((n) => `members/${n}`);
  writeFileSync(path.join(dir, 'group.test.js'), `require(${JSON.stringify(runner)}).runGroup(__dirname, ${JSON.stringify(names)});\n`);
  const logFile = path.join(dir, 'order.log');
  writeFileSync(logFile, '');

  const run = await new Promise<{ code: number; out: string }>((resolve) =>
    execFile(
      process.execPath,
      [path.join(PROJECT_ROOT, 'node_modules', 'ava', 'entrypoints', 'cli.mjs')],
      { cwd: dir, env: { ...process.env, FG_LOG: logFile, FG_A: undefined, NODE_OPTIONS: undefined, ...env }, timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: stdout + stderr }),
    ),
  );
  return { ...run, lines: readFileSync(logFile, 'utf8').trim().split('\n') };
}

test('a group runs its files one after another, each with its own hooks, order and environment; a broken hook fails', async (t) => {
  const { lines, ...run } = await runFixtureGroup(t, MEMBERS);

  // a: before, the serial tests in order, the other two at once (both started before either ends), teardowns, after.
  t.deepEqual(lines.slice(0, 3), ['a before', 'a s1', 'a s2'], lines.join('\n'));
  t.deepEqual(lines.slice(3, 5).sort(), ['a c1 start', 'a c2 start'], lines.join('\n'));
  t.deepEqual(lines.slice(5, 7).sort(), ['a c1 end', 'a c2 end'], lines.join('\n'));
  // Then the teardown, a's after hook, and only then b, which does not see a's environment.
  t.deepEqual(lines.slice(7), ['a c2 teardown', 'a after', 'b before, FG_A unset', 'b test', 'b after', 'c after', 'd test', 'd after'], lines.join('\n'));
  t.is(run.code, 1, run.out);
  t.regex(run.out, /members\/a\.js › c1/);
  t.regex(run.out, /members\/b\.js › same title/);
  t.regex(run.out, /members\/c\.js › same title/);
  t.regex(run.out, /c before broke/);
  t.regex(run.out, /members\/d\.js: after\.always hook failed: Error: d cleanup broke/);
  t.is(run.out.match(/✔ members\//g)?.length, 6, run.out);
  t.regex(run.out, /1 hook failed\s+1 test failed/);
  // Nothing held it: the process ended by itself, not by the group's end-of-run guard.
  t.notRegex(run.out, /still runs/);
});

test('a group whose process is still held some time after its last hook ends it, failing, with what holds it', async (t) => {
  const started = Date.now();
  const run = await runFixtureGroup(
    t,
    { 'e.js': "test('leaves a timer', (t) => { setInterval(() => {}, 1000); log('e test'); t.pass(); });" },
    { COINKEEP_GROUP_EXIT_WAIT_MS: '1000' },
  );
  t.not(run.code, 0, run.out);
  t.regex(run.out, /still runs, held by: .*Timeout/);
  t.regex(run.out, /✔ members\/e\.js › leaves a timer/);
  t.true(Date.now() - started < 60_000, 'ended by the group, not by a timeout');
});
