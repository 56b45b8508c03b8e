import type { Actor } from '../team/team.service';
import { validationError } from '../shared/errors';

/** The member a CLI call acts as (`--as EMAIL`, `--otp CODE`), from an admin request body. */
export function memberActor(body: Record<string, unknown>): Actor {
  const as = body.as;
  if (typeof as !== 'string' || as === '') throw validationError('as', 'name the member you act as (--as EMAIL)');
  const otp = body.otp;
  if (otp !== undefined && typeof otp !== 'string') throw validationError('otp', 'otp must be a string');
  return { kind: 'member', email: as, otp };
}

/** The member a CLI call acts as, or the host's operator when it names none (`member add` without `--as`). */
export function memberOrOperator(body: Record<string, unknown>): Actor {
  return body.as === undefined ? { kind: 'operator' } : memberActor(body);
}
