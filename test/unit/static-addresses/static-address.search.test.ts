/** How GET /v1/addresses?search= is matched: a prefix below a trigram, a substring from one on. */
import test from 'ava';
import {
  DENSE_MATCHES,
  FEW_ROWS,
  likeAnywhere,
  phrase,
  planFromProbe,
  planFromTail,
  searchStart,
  TAIL,
} from '../../../src/static-addresses/static-address.search';

test('no search text filters nothing', (t) => {
  t.deepEqual(searchStart(undefined, 'sqlite'), { kind: 'none' });
});

test('one or two characters match the start of the address, the customer id or the label, on either database', (t) => {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    t.deepEqual(searchStart('0x', dialect), { kind: 'prefix', text: '0x' });
    t.deepEqual(searchStart('é€', dialect), { kind: 'prefix', text: 'é€' }, 'characters, not UTF-16 units, are counted');
  }
});

test('from three characters on, PostgreSQL matches the substring with LIKE, its own % _ and \\ taken literally', (t) => {
  t.deepEqual(searchStart('cust-1', 'postgres'), { kind: 'like', text: 'cust-1' });
  t.is(likeAnywhere('50%_off\\'), '%50\\%\\_off\\\\%');
});

test("from three characters on, SQLite first asks the trigram index for the text's last characters", (t) => {
  const address = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
  t.deepEqual(searchStart(address, 'sqlite'), { kind: 'tail', text: address, phrase: `"${address.slice(-TAIL)}"` });
  t.deepEqual(searchStart('abc', 'sqlite'), { kind: 'tail', text: 'abc', phrase: '"abc"' });
});

test('few rows holding the tail are read by rowid and tested for the whole text; more leave it to the probe', (t) => {
  t.deepEqual(planFromTail('cust-42', [3, 9]), { kind: 'rows', text: 'cust-42', rowids: [3, 9] });
  t.deepEqual(planFromTail('cust-42', []), { kind: 'rows', text: 'cust-42', rowids: [] });
  const rows = (n: number) => Array.from({ length: n }, (_, i) => i);
  t.like(planFromTail('cust-42', rows(FEW_ROWS)), { kind: 'rows' });
  t.is(planFromTail('cust-42', rows(FEW_ROWS + 1)), null);
});

test('a text common among the newest addresses is scanned newest first; a rare one is answered by the index', (t) => {
  t.deepEqual(planFromProbe('cust', DENSE_MATCHES), { kind: 'scan', text: 'cust' });
  t.deepEqual(planFromProbe('cust', DENSE_MATCHES - 1), { kind: 'index', text: 'cust' });
});

test('a search text is one FTS5 phrase, its quotes doubled: never an FTS5 query of its own', (t) => {
  t.is(phrase('a"b'), '"a""b"');
  t.is(phrase('x OR y'), '"x OR y"');
});
