import test from 'ava';
import { GroupCommit } from '../../../src/db/group-commit';
import { tempStore } from '../../helpers/memory-store';

const rows = async (store: Awaited<ReturnType<typeof tempStore>>) =>
  ((await store.read.query('SELECT name FROM group_rows ORDER BY name')) as Array<{ name: string }>).map((r) => r.name);

test('jobs that arrive together share one transaction; each caller gets its own result', async (t) => {
  const store = await tempStore(t);
  await store.write((em) => em.query('CREATE TABLE group_rows (name TEXT PRIMARY KEY)'));
  let transactions = 0;
  const write = store.write.bind(store);
  store.write = (fn) => {
    transactions++;
    return write(fn);
  };
  const commits = new GroupCommit(store);
  const names = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);
  const results = await Promise.all(names.map((n) => commits.run(async (em) => (await em.query('INSERT INTO group_rows (name) VALUES (?)', [n]), n.toUpperCase()))));
  t.deepEqual(results, names.map((n) => n.toUpperCase()));
  t.deepEqual(await rows(store), names);
  t.true(transactions < names.length, `${transactions} transactions for ${names.length} jobs`);
});

test('a job that throws is rolled back alone and gets its own error; the others commit', async (t) => {
  const store = await tempStore(t);
  await store.write((em) => em.query('CREATE TABLE group_rows (name TEXT PRIMARY KEY)'));
  const commits = new GroupCommit(store);
  const insert = (n: string, fail = false) =>
    commits.run(async (em) => {
      await em.query('INSERT INTO group_rows (name) VALUES (?)', [n]);
      if (fail) throw new Error(`job ${n} failed`);
      return n;
    });
  const [a, b, c, dup] = await Promise.allSettled([insert('a'), insert('b', true), insert('c'), insert('a')]);
  t.deepEqual(a, { status: 'fulfilled', value: 'a' });
  t.is(b.status, 'rejected');
  t.is((b as PromiseRejectedResult).reason.message, 'job b failed');
  t.deepEqual(c, { status: 'fulfilled', value: 'c' });
  t.is(dup.status, 'rejected', 'a constraint violation fails its own job only');
  t.deepEqual(await rows(store), ['a', 'c']);
});

test('a job that comes after a batch gets a transaction of its own', async (t) => {
  const store = await tempStore(t);
  await store.write((em) => em.query('CREATE TABLE group_rows (name TEXT PRIMARY KEY)'));
  const commits = new GroupCommit(store);
  await commits.run((em) => em.query('INSERT INTO group_rows (name) VALUES (?)', ['first']));
  await commits.run((em) => em.query('INSERT INTO group_rows (name) VALUES (?)', ['second']));
  t.deepEqual(await rows(store), ['first', 'second']);
});
