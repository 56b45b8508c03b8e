import type { Command } from 'commander';
import type { ReactElement } from 'react';
import { colorAllowed, loadInk, LookProvider } from '../dashboard/look';
import { Confirm, PickList, type PickItem } from '../dashboard/prompts';
import { UserError } from '../shared/errors';
import { globals } from './context';

/** A prompt may be drawn: stdin and stderr are a terminal and the caller did not ask for --json. */
export const mayPrompt = (cmd: Command): boolean => Boolean(process.stdin.isTTY && process.stderr.isTTY && !globals(cmd).json);

/** Draws one prompt on stderr (stdout stays the command's output) until it answers; Ctrl-C cancels. */
async function ask<T>(build: (answer: (value: T) => void) => ReactElement): Promise<T | undefined> {
  const ink = await loadInk();
  let result: T | undefined;
  let answered = false;
  const instance = ink.render(
    <LookProvider look={{ ink, color: colorAllowed() }}>
      {/* A terminal that reports no size (0 columns) still gets a usable width. */}
      <ink.Box width={process.stderr.columns || 80} flexDirection="column">
        {build((value) => {
          result = value;
          answered = true;
          instance.unmount();
        })}
      </ink.Box>
    </LookProvider>,
    { stdout: process.stderr, exitOnCtrlC: true, patchConsole: false },
  );
  try {
    await instance.waitUntilExit();
  } finally {
    process.stdin.pause();
  }
  return answered ? result : undefined;
}

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
  const picked = await ask<string | null>((answer) => <PickList title={opts.title} items={items} onPick={answer} />);
  if (picked === undefined || picked === null) throw new UserError('cancelled; nothing changed');
  return picked;
}

/** A destructive action asks first on a terminal unless --yes; without a terminal or with --json it goes ahead. */
export async function confirmAction(cmd: Command, question: string, yes: boolean | undefined): Promise<void> {
  if (yes || !mayPrompt(cmd)) return;
  const ok = await ask<boolean>((answer) => <Confirm question={question} onAnswer={answer} />);
  if (!ok) throw new UserError('cancelled; nothing changed');
}
