import test from 'ava';
import { Confirm, MaskedInput, PickList } from '../../../src/dashboard/prompts';
import { KEY, renderInk } from '../../helpers/ink';

const items = [
  { value: 'w1', label: 'first withdrawal' },
  { value: 'w2', label: 'second withdrawal' },
  { value: 'w3', label: 'third withdrawal' },
];

test('a pick list shows every choice, moves with the arrows and answers the one chosen with Enter', async (t) => {
  let picked: string | null | undefined;
  const r = await renderInk(() => <PickList title="Which withdrawal to approve?" items={items} onPick={(v) => (picked = v)} />);
  t.teardown(() => r.unmount());
  const first = await r.waitFor(/Which withdrawal to approve\?/);
  t.regex(first, /› first withdrawal/);
  t.regex(first, /1\/3/);
  await r.press(KEY.down, KEY.down);
  t.regex(await r.waitFor(/› third withdrawal/), /3\/3/);
  await r.press(KEY.down, KEY.up);
  await r.waitFor(/› second withdrawal/);
  t.is(picked, undefined, 'nothing chosen before Enter');
  await r.press(KEY.enter);
  t.is(picked, 'w2');
});

test('Esc on a pick list answers nothing chosen', async (t) => {
  let picked: string | null | undefined;
  const r = await renderInk(() => <PickList title="Pick" items={items} onPick={(v) => (picked = v)} />);
  t.teardown(() => r.unmount());
  await r.waitFor(/› first/);
  await r.press(KEY.escape);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(picked, null);
});

test('a confirmation says yes only to y; Enter and n say no', async (t) => {
  for (const [key, expected] of [
    ['y', true],
    ['n', false],
    [KEY.enter, false],
  ] as const) {
    let answer: boolean | undefined;
    const r = await renderInk(() => <Confirm question="Revoke key ck_live_x?" onAnswer={(yes) => (answer = yes)} />);
    t.regex(await r.waitFor(/Revoke key ck_live_x\? \[y\/N\]/), /\[y\/N\]/);
    await r.press(key);
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.is(answer, expected, JSON.stringify(key));
    r.unmount();
  }
});

test('the two-factor prompt never shows the digits typed, takes Backspace, and answers the code on Enter', async (t) => {
  let code: string | null | undefined;
  const r = await renderInk(() => <MaskedInput label="Two-factor code:" onSubmit={(v) => (code = v)} />);
  t.teardown(() => r.unmount());
  await r.waitFor(/Two-factor code:/);
  await r.press('1', '2', '3', '9', KEY.backspace, '4', '5', '6');
  const frame = await r.waitFor(/••••••/);
  t.notRegex(frame, /\d{2}/, 'no digit of the code on screen');
  await r.press(KEY.enter);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(code, '123456');
});
