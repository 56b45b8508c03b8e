import { totpCode, totpStep, TOTP_STEP_SECONDS } from '../../src/team/totp';

/**
 * Two-factor codes for tests against a daemon on the real clock. The daemon accepts a step once and
 * only steps later than the last one accepted, inside a ±1 window; so each call gives a later step.
 * The previous step is used only when it stays valid for 15 s more, time for a few CLI calls on a
 * busy machine (no flake at a step boundary); when no step is left, it waits for the window to move.
 */
const PREVIOUS_STEP_MARGIN_MS = 15_000;

export class RealOtp {
  private last = -Infinity;
  constructor(readonly secret: string) {}

  async next(): Promise<string> {
    for (;;) {
      const nowMs = Date.now();
      const now = totpStep(new Date(nowMs));
      const leftInStepMs = (now + 1) * TOTP_STEP_SECONDS * 1000 - nowMs;
      const candidates = [leftInStepMs > PREVIOUS_STEP_MARGIN_MS ? now - 1 : null, now, now + 1].filter((s): s is number => s !== null && s > this.last);
      if (candidates.length) {
        this.last = candidates[0]!;
        return totpCode(this.secret, this.last);
      }
      await new Promise((r) => setTimeout(r, Math.min(leftInStepMs + 50, 1000)));
    }
  }
}
