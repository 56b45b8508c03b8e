import { useState } from 'react';
import { tint, useLook } from './look';

export interface PickItem {
  value: string;
  label: string;
}

/** A list to choose one from: ↑/↓ (or k/j) move, Enter picks, Esc or q cancels (null). */
export function PickList({ title, items, onPick, height = 10 }: { title: string; items: PickItem[]; onPick: (value: string | null) => void; height?: number }) {
  const look = useLook();
  const { Box, Text, useInput } = look.ink;
  const [at, setAt] = useState(0);
  useInput((input, key) => {
    if (key.upArrow || input === 'k') setAt((i) => Math.max(0, i - 1));
    else if (key.downArrow || input === 'j') setAt((i) => Math.min(items.length - 1, i + 1));
    else if (key.return && items[at]) onPick(items[at]!.value);
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

/** A yes/no question; only y says yes (n, Enter and Esc say no). */
export function Confirm({ question, onAnswer }: { question: string; onAnswer: (yes: boolean) => void }) {
  const look = useLook();
  const { Text, useInput } = look.ink;
  useInput((input, key) => {
    if (input === 'y' || input === 'Y') onAnswer(true);
    else if (input === 'n' || input === 'N' || key.return || key.escape || input === 'q') onAnswer(false);
  });
  return (
    <Text color={tint(look, 'yellow')} wrap="truncate">
      {question} [y/N]
    </Text>
  );
}

/** A secret typed without echo (the two-factor code): each character shows as •; Esc cancels (null). */
export function MaskedInput({ label, onSubmit }: { label: string; onSubmit: (value: string | null) => void }) {
  const look = useLook();
  const { Text, useInput } = look.ink;
  const [value, setValue] = useState('');
  useInput((input, key) => {
    if (key.return) onSubmit(value);
    else if (key.escape) onSubmit(null);
    else if (key.backspace || key.delete) setValue((v) => v.slice(0, -1));
    else if (input && !key.ctrl && !key.meta && /^[\x20-\x7e]+$/.test(input) && value.length < 64) setValue((v) => v + input);
  });
  return (
    <Text wrap="truncate">
      {label} {'•'.repeat(value.length)}
      <Text inverse> </Text>
    </Text>
  );
}
