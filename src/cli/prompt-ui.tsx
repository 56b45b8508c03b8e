/**
 * The terminal prompts (ink): loaded by interactive.ts only when a prompt is drawn, so that no other
 * CLI call loads React.
 */
import type { ReactElement } from 'react';
import { colorAllowed, loadInk, LookProvider } from '../dashboard/look';
import { Confirm, PickList, type PickItem } from '../dashboard/prompts';

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

/** The picked id, or null when the person cancelled (Esc). undefined: Ctrl-C. */
export const askPick = (title: string, items: PickItem[]): Promise<string | null | undefined> =>
  ask<string | null>((answer) => <PickList title={title} items={items} onPick={answer} />);

/** The answer to a yes/no question. */
export const askConfirm = (question: string): Promise<boolean | undefined> => ask<boolean>((answer) => <Confirm question={question} onAnswer={answer} />);
