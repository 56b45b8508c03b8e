import { setTimeout as sleep } from 'node:timers/promises';
import { TOTP_STEP_SECONDS, totpCode, totpStep } from '../team/totp';

/**
 * Acts with the sandbox's own two-factor code for the demo owner (its secret is in the sandbox's
 * demo.json): the current step's code, or, when that one was already used (a step is accepted
 * once, and only after the last one accepted), the next step's, which the daemon's ±1 window
 * accepts too. When both were used (a third act within one step: the sandbox's own grant and two
 * approvals), it waits for the next step, whose window admits a later code.
 */
export async function withSandboxCode<T>(totpSecret: string, act: (code: string) => Promise<T>): Promise<T> {
  for (let round = 0; ; round++) {
    const now = Date.now();
    const step = totpStep(new Date(now));
    let used: unknown;
    for (const s of [step, step + 1]) {
      try {
        return await act(totpCode(totpSecret, s));
      } catch (err) {
        if (!(err instanceof Error && /already used/.test(err.message))) throw err;
        used = err;
      }
    }
    if (round >= 2) throw used;
    await sleep((step + 1) * TOTP_STEP_SECONDS * 1000 - now + 50);
  }
}
