import test from 'ava';
import { afterCommit } from '../../../src/db/after-commit';
import { rawQuery } from '../../../src/db/raw';
import { Outbox } from '../../../src/events/outbox';
import { tempStore } from '../../helpers/memory-store';

const undispatched = async (store: Awaited<ReturnType<typeof tempStore>>) =>
  Number((await rawQuery<{ n: number }>(store.read, 'SELECT COUNT(*) AS n FROM events WHERE dispatched_at IS NULL'))[0]!.n);

test('an emit wakes the listeners once its transaction committed, once per transaction, and they see the rows', async (t) => {
  const store = await tempStore(t);
  const outbox = new Outbox();
  const seen: number[] = [];
  let settled = false;
  outbox.onEmit(() => {
    seen.push(settled ? -1 : 0);
    void undispatched(store).then((n) => seen.push(n));
  });
  const done = store.write(async (em) => {
    for (let i = 0; i < 3; i++) await outbox.emit(em, { accountId: 'a', type: 'invoice.paid', data: { i }, at: new Date() });
    // The transaction goes on after its emits: no listener may run before it commits.
    await new Promise((r) => setTimeout(r, 30));
    t.deepEqual(seen, []);
  });
  await done;
  settled = true;
  t.is(seen[0], 0, 'woken as the write resolves, before anything else runs');
  await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(seen, [0, 3]);
});

test('a rolled-back transaction wakes nobody; work outside a store transaction runs on the next turn', async (t) => {
  const store = await tempStore(t);
  let runs = 0;
  await t.throwsAsync(
    store.write(async (em) => {
      afterCommit(em, 'k', () => runs++);
      throw new Error('rolled back');
    }),
  );
  await new Promise((r) => setTimeout(r, 10));
  t.is(runs, 0);
  afterCommit(store.read, 'k', () => runs++);
  t.is(runs, 0);
  await new Promise((r) => setImmediate(r));
  t.is(runs, 1);
});
