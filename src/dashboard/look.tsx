import { createContext, useContext, useRef, type ReactNode } from 'react';
import type { Key } from 'ink';

/** ink's module: ESM only, so this CommonJS project loads it with import() and hands it down. */
export type Ink = typeof import('ink');

export const loadInk = (): Promise<Ink> => import('ink');

/** What every component draws with: ink's components, and whether colours are allowed (NO_COLOR). */
export interface Look {
  ink: Ink;
  color: boolean;
}

const LookContext = createContext<Look | null>(null);

export function LookProvider({ look, children }: { look: Look; children: ReactNode }) {
  return <LookContext.Provider value={look}>{children}</LookContext.Provider>;
}

export function useLook(): Look {
  const look = useContext(LookContext);
  if (!look) throw new Error('dashboard components render inside LookProvider');
  return look;
}

/** Colours on unless NO_COLOR is set to anything (no-color.org). */
export const colorAllowed = (env: NodeJS.ProcessEnv = process.env): boolean => env.NO_COLOR === undefined || env.NO_COLOR === '';

/** A colour when allowed, else nothing (bold and inverse still mark what matters). */
export const tint = (look: Look, color: string): string | undefined => (look.color ? color : undefined);

/**
 * ink's useInput, always calling the handler of the latest render. ink subscribes the handler in
 * an effect; a key that arrives between a render and that effect (a poll's update lands just
 * before the key) would reach the previous render's handler and act on stale state.
 */
export function useKeys(handler: (input: string, key: Key) => void, isActive = true): void {
  const { useInput } = useLook().ink;
  const latest = useRef(handler);
  latest.current = handler;
  const stable = useRef((input: string, key: Key) => latest.current(input, key));
  useInput(stable.current, { isActive });
}
