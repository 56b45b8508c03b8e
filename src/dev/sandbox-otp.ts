import { totpCode, totpStep } from '../team/totp';

/**
 * Acts with the sandbox's own two-factor code for the demo owner (its secret is in the sandbox's
 * demo.json): the current step's code, or, when that one was already used (a code is accepted
 * once), the next step's, which the daemon's ±1 window accepts too.
 */
export async function withSandboxCode<T>(totpSecret: string, act: (code: string) => Promise<T>): Promise<T> {
  const step = totpStep(new Date());
  try {
    return await act(totpCode(totpSecret, step));
  } catch (err) {
    if (!(err instanceof Error && /already used/.test(err.message))) throw err;
    return act(totpCode(totpSecret, step + 1));
  }
}
