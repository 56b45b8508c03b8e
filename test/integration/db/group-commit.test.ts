import test from 'ava';
import { GroupCommit } from '../../../src/db/group-commit';
import { Ledger } from '../../../src/ledger/ledger';
import { verifyLedger } from '../../../src/ledger/verify';
import { FakeClock } from '../../../src/shared/clock';
import { Amount } from '../../../src/shared/amount';
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
  const results = await Promise.all(
    names.map((n) => commits.run(async (em) => (await em.query('INSERT INTO group_rows (name) VALUES (?)', [n]), n.toUpperCase()))),
  );
  t.deepEqual(
    results,
    names.map((n) => n.toUpperCase()),
  );
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

test('ledger appends of one batch read balances an earlier job wrote; a job rolled back after its append leaves the next ones the stored balances', async (t) => {
  const store = await tempStore(t);
  const ledger = new Ledger(new FakeClock());
  const commits = new GroupCommit(store);
  const coinId = 'coin-1';
  const move = (amount: string, code: string) => ({ coinId, debit: 'world', credit: 'shop', amount: Amount.of(amount), code });
  // One batch: +5, +7 then refused after its append (rolled back to its savepoint), +11, then a hold of 24 checked against what is available.
  const jobs = [
    commits.run((em) => ledger.post(em, [move('5', 'a')])),
    commits.run((em) => ledger.post(em, [move('7', 'b')])),
    commits.run(async (em) => {
      await ledger.post(em, [move('1000', 'c')]);
      throw new Error('refused after its append');
    }),
    commits.run((em) => ledger.post(em, [move('11', 'd')])),
    commits.run((em) => ledger.hold(em, { coinId, debit: 'shop', credit: 'out', amount: Amount.of('24'), code: 'e', ensureFunds: true })),
    commits.run((em) => ledger.hold(em, { coinId, debit: 'shop', credit: 'out', amount: Amount.of('4'), code: 'f', ensureFunds: true })),
  ];
  const settled = await Promise.allSettled(jobs);
  t.deepEqual(
    settled.map((s) => s.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
    'the hold of 24 is refused: 23 were available, not 1023',
  );
  const shop = await ledger.balance(store.read, 'shop', coinId);
  t.is(shop.available.toString(), '19');
  t.is(shop.hold.toString(), '4');
  const report = await store.read.transaction((em) => verifyLedger(em));
  t.true(report.ok, JSON.stringify(report.differences));
});
