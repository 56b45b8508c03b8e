/**
 * A limit learned from a node's answers (PRODUCT §15): it shrinks on "too much" (to what the node
 * named, else by half), grows back after successes, never above its configured bound, and does not
 * climb back to a size that failed until many successes later.
 */
import test from 'ava';
import { LearnedLimit } from '../../../src/chains/learned-limit';

test('a limit starts at its bound and halves on each "too much", never below one', (t) => {
  const l = new LearnedLimit(100);
  t.is(l.value, 100);
  t.is(l.tooMuch(100), 50);
  t.is(l.tooMuch(50), 25);
  for (let i = 0; i < 10; i++) l.tooMuch(l.value);
  t.is(l.value, 1);
});

test('a size the node names (QuickNode: "limited to a 5 range") is taken at once', (t) => {
  const l = new LearnedLimit(100);
  t.is(l.tooMuch(100, 5), 5);
  // A stated size no smaller than what failed is not believed: halved instead.
  const m = new LearnedLimit(100);
  t.is(m.tooMuch(40, 40), 20);
});

test('a failure of an older, larger request does not undo a smaller limit learned meanwhile', (t) => {
  const l = new LearnedLimit(100);
  l.tooMuch(100, 10);
  t.is(l.tooMuch(100), 10);
});

test('successes grow the limit back, doubling, up to the bound, never up to a size that failed until it is forgotten', (t) => {
  const l = new LearnedLimit(100, { growAfter: 3, forgetAfter: 30 });
  l.tooMuch(40, 5);
  const seen: number[] = [];
  for (let i = 0; i < 30; i++) {
    l.succeeded();
    seen.push(l.value);
  }
  t.is(seen[2], 10);
  t.is(seen[5], 20);
  // 40 failed: it stays at 39 at most ...
  t.is(seen[8], 39);
  t.is(seen[28], 39);
  // ... until 30 successes forget it; then it reaches the bound.
  for (let i = 0; i < 6; i++) l.succeeded();
  t.is(l.value, 100);
});

test('a limit at its bound stays there', (t) => {
  const l = new LearnedLimit(20, { growAfter: 1 });
  for (let i = 0; i < 5; i++) l.succeeded();
  t.is(l.value, 20);
  t.throws(() => new LearnedLimit(0));
});

test("a size the node named as its plan's limit is a ceiling the limit never grows past, even after the failure is forgotten (no refusal every few hundred requests)", (t) => {
  const l = new LearnedLimit(100, { growAfter: 2, forgetAfter: 10 });
  t.is(l.tooMuch(100, 5, true), 5);
  for (let i = 0; i < 200; i++) l.succeeded();
  t.is(l.value, 5, 'QuickNode said 5: asking 6 or 10 would only be refused');
  const unnamed = new LearnedLimit(100, { growAfter: 2, forgetAfter: 10 });
  unnamed.tooMuch(100, 5);
  for (let i = 0; i < 200; i++) unnamed.succeeded();
  t.is(unnamed.value, 100, "a size suggested for one range's results (Infura) is forgotten and the bound tried again");
});
