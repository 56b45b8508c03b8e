/**
 * Several test files in one ava worker (a process for integration files, a thread for unit files),
 * one file after another, as if each had a worker of its own (`npm test`;
 * scripts/write-test-groups.mjs writes the groups). A worker's start, ava's own modules and the
 * daemon's cost this virtual machine as much CPU as a typical file's tests, or more (a thread loads
 * the modules again; figures in docs/testing.md, "Groups"). A group pays that once.
 *
 * Each member file gets its own `test` (its `require('ava')` is answered with it), which keeps
 * ava's order inside the file: the `before` hooks, then the serial tests one at a time in order,
 * then the other tests at once, then the `after.always` hooks, however the tests end. The next
 * file starts when this one's hooks are done, with the environment variables as they were before
 * it (the PostgreSQL files set the master key there). Every test is declared to ava as a
 * concurrent test whose body waits for its turn, its title prefixed with the file's path; a hook
 * that fails fails the file's tests, or, for `after.always`, the group.
 *
 * Only whole runs: ava's `--match` would leave a file's count of tests unreached (run a single
 * file with `npx ava dist/test/.../x.test.js` instead, its own process as ever).
 */
import ava, { type ExecutionContext } from 'ava';
import Module from 'node:module';
import path from 'node:path';

type Body = (t: ExecutionContext, ...args: unknown[]) => unknown;
type Hook = () => unknown;

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

interface MemberFile {
  name: string;
  before: Hook[];
  afterAlways: Hook[];
  /** The serial tests' completions, in order (each waits for the one before). */
  serialDone: Deferred[];
  tests: number;
  finished: number;
  /** Resolves when the file may start (the previous one closed). */
  turn: Promise<void>;
  started?: Promise<unknown>;
  /** The environment variables as they were when the file started, put back when it closes. */
  env?: NodeJS.ProcessEnv;
  closed: Deferred;
}

/** What a member file's `import test from 'ava'` gets: the parts of ava's API the test files use (anything else throws, naming it). */
function memberApi(file: MemberFile) {
  const declare =
    (serial: boolean) =>
    (title: string, body: Body, ...args: unknown[]): void => {
      const index = serial ? file.serialDone.length : -1;
      if (serial) file.serialDone.push(deferred());
      file.tests++;
      ava(`${file.name} › ${title}`, async (t) => {
        // Registered first, so it runs last: after the test's own teardowns.
        t.teardown(() => testDone(file, index));
        await file.turn;
        await startFile(file);
        if (index > 0) await file.serialDone[index - 1]!.promise;
        if (index < 0 && file.serialDone.length > 0) await file.serialDone[file.serialDone.length - 1]!.promise;
        await body(t, ...args);
      });
    };
  const skip = (title: string, body?: Body): void => ava.skip(`${file.name} › ${title}`, body ?? (() => undefined));
  const hook = (list: Hook[]) => (a: string | Hook, b?: Hook) => void list.push(typeof a === 'function' ? a : b!);
  const api = Object.assign(declare(false), {
    serial: Object.assign(declare(true), { skip }),
    skip,
    before: hook(file.before),
    after: { always: hook(file.afterAlways) },
  });
  return new Proxy(api, {
    get(target, prop, receiver) {
      if (prop === 'default') return receiver;
      if (typeof prop === 'symbol' || prop === '__esModule') return undefined;
      if (!(prop in target)) throw new Error(`file-group: ${file.name} uses test.${String(prop)}, which the group runner does not offer`);
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** The failures of `after.always` hooks, reported together when the group ends. */
const hookErrors: string[] = [];

/** The file's `before` hooks, once, at its first test's turn: their error fails each of its tests. */
function startFile(file: MemberFile): Promise<unknown> {
  file.started ??= (async () => {
    file.env = { ...process.env };
    for (const h of file.before) await h();
  })();
  return file.started;
}

function testDone(file: MemberFile, index: number): void {
  if (index >= 0) file.serialDone[index]!.resolve();
  if (++file.finished === file.tests) void closeFile(file);
}

async function closeFile(file: MemberFile): Promise<void> {
  for (const h of file.afterAlways) {
    try {
      await h();
    } catch (err) {
      hookErrors.push(`${file.name}: after.always hook failed: ${(err as Error).stack ?? String(err)}`);
    }
  }
  if (file.env) {
    for (const k of Object.keys(process.env)) if (!(k in file.env)) delete process.env[k];
    Object.assign(process.env, file.env);
  }
  file.closed.resolve();
}

/** Declares the tests of `files` (paths of compiled test files, relative to `root`) as one group. */
export function runGroup(root: string, files: string[]): void {
  const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
  const load = loader._load;
  let previous: Promise<void> = Promise.resolve();
  for (const rel of files) {
    const file: MemberFile = {
      name: rel.replace(/^integration\//, '').replace(/\.test\.js$/, ''),
      before: [],
      afterAlways: [],
      serialDone: [],
      tests: 0,
      finished: 0,
      turn: previous,
      closed: deferred(),
    };
    const api = memberApi(file);
    loader._load = function (request, parent, isMain) {
      return request === 'ava' ? api : load.call(this, request, parent, isMain);
    };
    try {
      require(path.join(root, rel));
    } finally {
      loader._load = load;
    }
    // A file with no test to run (all skipped) only runs its hooks' ends: nothing to wait for.
    if (file.tests === 0) file.closed.resolve();
    previous = file.closed.promise;
  }
  ava.after.always('the member files closed', async () => {
    await previous;
    // A process still running long after its group's last hook is held by something a file left
    // (a thread blocked for good, a timer): ava would wait on it for ever. It ends it, failing.
    setTimeout(() => {
      process.stderr.write(
        `file-group: ${EXIT_WAIT_MS} ms after the group's last hook its process still runs, held by: ${process.getActiveResourcesInfo().join(', ')}\n`,
      );
      process.exit(1);
    }, EXIT_WAIT_MS).unref();
    if (hookErrors.length > 0) throw new Error(hookErrors.join('\n'));
  });
}

/** How long a group's process may go on after its last hook (the group's own test shortens it). */
const EXIT_WAIT_MS = Number(process.env.COINKEEP_GROUP_EXIT_WAIT_MS ?? 60_000);
