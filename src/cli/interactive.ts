import type { Command } from 'commander';
import type { PickItem } from '../dashboard/prompts';
import { UserError } from '../shared/errors';
import { globals } from './context';

/** A prompt may be drawn: stdin and stderr are a terminal and the caller did not ask for --json. */
export const mayPrompt = (cmd: Command): boolean => Boolean(process.stdin.isTTY && process.stderr.isTTY && !globals(cmd).json);

// The prompts' code (React, ink) loads only when one is drawn.
const promptUi = () => require('./prompt-ui') as typeof import('./prompt-ui');

/**
 * The id a command acts on: as given, or on a terminal picked from a list (PRODUCT §12, issue 21
 * §2). Under --json or without a terminal it never prompts: one line names what is missing.
 */
export async function pickId(
  cmd: Command,
  given: string | undefined,
  opts: { argument: string; title: string; empty: string; load: () => Promise<PickItem[]> },
): Promise<string> {
  if (given !== undefined && given !== '') return given;
  if (!mayPrompt(cmd)) throw new UserError(`missing required argument ${opts.argument}`, 2);
  const items = await opts.load();
  if (items.length === 0) throw new UserError(`${opts.empty}; nothing to pick (${opts.argument})`);
  const picked = await promptUi().askPick(opts.title, items);
  if (picked === undefined || picked === null) throw new UserError('cancelled; nothing changed');
  return picked;
}

/** A destructive action asks first on a terminal unless --yes; without a terminal or with --json it goes ahead. */
export async function confirmAction(cmd: Command, question: string, yes: boolean | undefined): Promise<void> {
  if (yes || !mayPrompt(cmd)) return;
  const ok = await promptUi().askConfirm(question);
  if (!ok) throw new UserError('cancelled; nothing changed');
}
