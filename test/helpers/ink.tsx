import type { ReactElement } from 'react';
import { Dashboard, type DashboardProps } from '../../src/dashboard/app';
import { socketApi } from '../../src/dashboard/client';
import { loadInk, LookProvider } from '../../src/dashboard/look';

/** Keys as a terminal sends them. */
export const KEY = { up: '\x1b[A', down: '\x1b[B', right: '\x1b[C', left: '\x1b[D', enter: '\r', escape: '\x1b', backspace: '\x7f', ctrlC: '\x03' } as const;

export interface Rendered {
  frame(): string;
  press(...keys: string[]): Promise<void>;
  /** The keys one after another in the same turn, faster than any frame (a held key, a busy machine). */
  pressAtOnce(...keys: string[]): void;
  /** Polls the last frame until it matches (or fails naming what it saw). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  unmount(): void;
}

/** Renders an ink element with ink-testing-library (ESM: loaded with import()), colours off. */
export async function renderInk(build: () => ReactElement): Promise<Rendered> {
  const ink = await loadInk();
  const itl = await import('ink-testing-library');
  const r = itl.render(<LookProvider look={{ ink, color: false }}>{build()}</LookProvider>);
  const frame = () => r.lastFrame() ?? '';
  return {
    frame,
    press: async (...keys) => {
      for (const k of keys) {
        r.stdin.write(k);
        // ink reads stdin on its next turn: give each key one before the next.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    pressAtOnce: (...keys) => {
      for (const k of keys) r.stdin.write(k);
    },
    waitFor: async (re, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const f = frame();
        if (re.test(f)) return f;
        if (Date.now() > deadline) throw new Error(`no ${re} on screen after ${timeoutMs} ms; the last frame:\n${f}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    unmount: () => r.unmount(),
  };
}

/** The dashboard against the daemon whose data dir is `dataDir`, over its admin socket. */
export function renderDashboard(dataDir: string, props: Omit<DashboardProps, 'api'> = {}): Promise<Rendered> {
  return renderInk(() => <Dashboard api={socketApi(dataDir)} refreshMs={200} {...props} />);
}
