import { useRef, useState } from 'react';
import type { Key } from 'ink';
import { tint, useKeys, useLook } from './look';

export interface PickItem {
  value: string;
  label: string;
}

/** A list to choose one from: ↑/↓ (or k/j) move, Enter picks, Esc or q cancels (null). */
export function PickList({ title, items, onPick, height = 10 }: { title: string; items: PickItem[]; onPick: (value: string | null) => void; height?: number }) {
  const look = useLook();
  const { Box, Text } = look.ink;
  const [at, setAt] = useState(0);
  const cursor = useRef(0);
  const move = (to: number) => {
    cursor.current = Math.max(0, Math.min(items.length - 1, to));
    setAt(cursor.current);
  };
  useKeys((input, key) => {
    if (key.upArrow || input === 'k') move(cursor.current - 1);
    else if (key.downArrow || input === 'j') move(cursor.current + 1);
    else if (key.return && items[cursor.current]) onPick(items[cursor.current]!.value);
    else if (key.escape || input === 'q') onPick(null);
  });
  const first = Math.max(0, Math.min(at - Math.floor(height / 2), items.length - height));
  const shown = items.slice(first, first + height);
  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      {shown.map((item, i) => (
        <Text key={item.value} inverse={first + i === at} color={first + i === at ? tint(look, 'cyan') : undefined} wrap="truncate">
          {first + i === at ? '› ' : '  '}
          {item.label}
        </Text>
      ))}
      <Text dimColor>{`${at + 1}/${items.length}  ↑/↓ move · Enter choose · Esc cancel`}</Text>
    </Box>
  );
}

/** A yes/no answer from a key: only y says yes (n, Enter, Esc and q say no); null: not an answer. */
export function confirmAnswer(input: string, key: Key): boolean | null {
  if (input === 'y' || input === 'Y') return true;
  if (input === 'n' || input === 'N' || key.return || key.escape || input === 'q') return false;
  return null;
}

export function ConfirmLine({ question }: { question: string }) {
  const look = useLook();
  const { Text } = look.ink;
  return (
    <Text color={tint(look, 'yellow')} wrap="truncate">
      {question} [y/N]
    </Text>
  );
}

/** A yes/no question on its own (the CLI's confirmations). */
export function Confirm({ question, onAnswer }: { question: string; onAnswer: (yes: boolean) => void }) {
  useKeys((input, key) => {
    const yes = confirmAnswer(input, key);
    if (yes !== null) onAnswer(yes);
  });
  return <ConfirmLine question={question} />;
}

/** One key typed into a secret: the value so far, or the end (the value on Enter, null on Esc). */
export function maskedStep(value: string, input: string, key: Key): { value: string } | { done: string | null } {
  if (key.return) return { done: value };
  if (key.escape) return { done: null };
  if (key.backspace || key.delete) return { value: value.slice(0, -1) };
  if (input && !key.ctrl && !key.meta && /^[\x20-\x7e]+$/.test(input) && value.length < 64) return { value: value + input };
  return { value };
}

/** A secret as typed so far: each character shows as •, never itself. */
export function MaskedLine({ label, length }: { label: string; length: number }) {
  const { Text } = useLook().ink;
  return (
    <Text wrap="truncate">
      {label} {'•'.repeat(length)}
      <Text inverse> </Text>
    </Text>
  );
}

/** A secret typed without echo (the two-factor code) on its own; Esc cancels (null). */
export function MaskedInput({ label, onSubmit }: { label: string; onSubmit: (value: string | null) => void }) {
  // The value lives in a ref too: keys typed faster than renders each see the one before.
  const typed = useRef('');
  const [length, setLength] = useState(0);
  useKeys((input, key) => {
    const step = maskedStep(typed.current, input, key);
    if ('done' in step) return onSubmit(step.done);
    typed.current = step.value;
    setLength(step.value.length);
  });
  return <MaskedLine label={label} length={length} />;
}
