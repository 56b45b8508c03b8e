import type { ErrorCode } from '../shared/api-route';

/** An error answer of the API (SPEC "Errors"): branch on `code`; `message` is for people. */
export class CoinkeepError extends Error {
  constructor(
    readonly status: number,
    /** One of SPEC's codes (a newer server may send others). */
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly details: Record<string, unknown>,
    /** Idempotency-Key the request was sent with (POST), to look the object up or retry later. */
    readonly idempotencyKey: string | null = null,
  ) {
    super(message);
    this.name = 'CoinkeepError';
  }
}

/** The API could not be reached (or answered no JSON) after every retry. */
export class CoinkeepConnectionError extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'CoinkeepConnectionError';
  }
}

/** A webhook delivery that is not validly signed, is outside the tolerance, or is not an event. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
