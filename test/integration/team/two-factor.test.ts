import test from 'ava';
import { FakeClock } from '../../../src/shared/clock';
import { ApiError } from '../../../src/shared/errors';
import { totpCode, totpStep } from '../../../src/team/totp';
import { startTestDaemon } from '../../helpers/daemon';

/**
 * PRODUCT §4: a member's two-factor code is checked with a ±1 step window and accepted once; a
 * later action needs a code of a later step. Driven on a fake clock, so the window never moves by
 * accident; the CLI's own test shows the same over the admin socket on the real clock.
 */

test('a code is accepted once, only steps later than the last one count, and the window is ±1 step', async (t) => {
  const clock = new FakeClock('2026-05-01T10:00:05.000Z');
  const d = await startTestDaemon({}, { clock });
  t.teardown(() => d.stop());
  const owner = 'owner@two-factor.test';
  const { account, member } = await d.daemon.team.createAccount('Shop', owner);
  const codeAt = (offset: number) => totpCode(member.totp_secret, totpStep(clock.now()) + offset);
  const setTtl = (otp: string | undefined, minutes: number) =>
    d.daemon.team.setSettings(account.id, { kind: 'member', email: owner, otp }, { invoice_ttl_minutes: minutes });
  const ttl = async () => (await d.daemon.team.showAccount(account.id)).account.invoice_ttl_minutes;
  const refused = async (otp: string | undefined, status: number, code: string, message: RegExp) => {
    const err = await t.throwsAsync(setTtl(otp, 999), { instanceOf: ApiError });
    t.is(err.status, status);
    t.is(err.code, code);
    t.is(err.details.field, 'otp');
    t.regex(err.message, message);
  };

  await refused(undefined, 400, 'validation_error', /required/);
  const now = codeAt(0);
  await setTtl(now, 45);
  t.is(await ttl(), 45);

  await refused(now, 403, 'forbidden', /already used/);
  await refused(codeAt(-1), 403, 'forbidden', /already used/);
  await setTtl(codeAt(1), 50);
  t.is(await ttl(), 50);

  clock.advance(90_000);
  await refused(codeAt(-2), 403, 'forbidden', /not valid/);
  await refused('12345', 403, 'forbidden', /not valid/);
  await setTtl(codeAt(-1), 55);
  t.is(await ttl(), 55, 'the refusals changed nothing; the last good code did');
});
