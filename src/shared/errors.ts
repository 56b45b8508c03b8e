/** The one error type. Every failure leaves the API as SPEC's envelope built from it. */
export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): { error: { code: string; message: string; details: ErrorDetails } } {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

export const validationError = (field: string, message: string, extra: ErrorDetails = {}): ApiError =>
  new ApiError(400, 'validation_error', message, { field, ...extra });

export const notFound = (what = 'resource'): ApiError => new ApiError(404, 'not_found', `${what} not found`);

export const conflict = (message: string, details: ErrorDetails = {}): ApiError => new ApiError(409, 'conflict', message, details);

export const unavailable = (message: string, details: ErrorDetails = {}): ApiError => new ApiError(503, 'unavailable', message, details);

/** An error for operators (CLI, config): one line, no envelope. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
