import { totpCode, totpStep, TOTP_STEP_SECONDS } from '../../src/team/totp';

/**
 * The TOTP step to use next after `last`, at `nowMs`: the daemon accepts a step once, only steps
 * later than the last one accepted, inside a ±1 window; the previous step is taken only while it
 * stays valid `marginMs` more (time for the request to reach the daemon on a busy machine). When the
 * window has no later step left: how long until the next step begins.
 */
export function nextTotpStep(last: number, nowMs: number, marginMs: number): { step: number } | { waitMs: number } {
  const now = totpStep(new Date(nowMs));
  const leftInStepMs = (now + 1) * TOTP_STEP_SECONDS * 1000 - nowMs;
  const step = Math.max(last + 1, leftInStepMs > marginMs ? now - 1 : now);
  return step <= now + 1 ? { step } : { waitMs: leftInStepMs };
}

/**
 * Two-factor codes for tests against a daemon on the real clock, each of a later step (nextTotpStep,
 * the previous step only while valid 15 s more: a few CLI calls); when no step is left it waits for
 * the window to move.
 */
const PREVIOUS_STEP_MARGIN_MS = 15_000;

export class RealOtp {
  private last = -Infinity;
  constructor(readonly secret: string) {}

  async next(): Promise<string> {
    for (;;) {
      const next = nextTotpStep(this.last, Date.now(), PREVIOUS_STEP_MARGIN_MS);
      if ('step' in next) {
        this.last = next.step;
        return totpCode(this.secret, next.step);
      }
      await new Promise((r) => setTimeout(r, Math.min(next.waitMs + 50, 1000)));
    }
  }
}
