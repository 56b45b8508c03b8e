import { socketApi } from './client';
import { Dashboard } from './app';
import { colorAllowed, loadInk, LookProvider } from './look';

/** Alternate screen buffer: the dashboard draws on its own screen and leaves the shell's as it was. */
const ENTER_ALT = '\x1b[?1049h\x1b[H';
const LEAVE_ALT = '\x1b[?1049l';

/**
 * `coinkeep dashboard` on the terminal: renders until q or Ctrl-C (or SIGTERM/SIGHUP), then gives
 * the terminal back as it found it (raw mode off, cursor shown, the shell's screen restored).
 */
export async function runDashboard(opts: { dataDir: string; account?: string; as?: string }): Promise<void> {
  const ink = await loadInk();
  const out = process.stdout;
  out.write(ENTER_ALT);
  const instance = ink.render(
    <LookProvider look={{ ink, color: colorAllowed() }}>
      <Dashboard api={socketApi(opts.dataDir)} account={opts.account} as={opts.as} />
    </LookProvider>,
    { exitOnCtrlC: true, patchConsole: true, maxFps: 20 },
  );
  const leave = () => instance.unmount();
  const signals = ['SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, leave);
  try {
    await instance.waitUntilExit();
  } finally {
    for (const s of signals) process.off(s, leave);
    out.write(LEAVE_ALT);
    process.stdin.pause();
  }
}
