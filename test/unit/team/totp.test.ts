import test from 'ava';
import { base32Decode, base32Encode, matchTotpStep, newTotpSecret, otpauthUrl, totpCode, totpStep } from '../../../src/team/totp';

/** PRODUCT §4: RFC 6238, SHA-1, 30 s steps, 6 digits, a ±1 step window. */

// RFC 6238 appendix B, SHA-1: the ASCII seed "12345678901234567890"; codes are the last 6 of its 8 digits.
const RFC_SECRET = base32Encode(Buffer.from('12345678901234567890', 'ascii'));
const RFC_VECTORS: Array<[number, string]> = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];

test('codes match the RFC 6238 SHA-1 vectors', (t) => {
  for (const [seconds, code] of RFC_VECTORS) t.is(totpCode(RFC_SECRET, totpStep(new Date(seconds * 1000))), code, String(seconds));
});

test('base32 round-trips, and a new secret is 160 bits of base32', (t) => {
  t.is(RFC_SECRET, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  t.is(base32Decode(RFC_SECRET).toString('ascii'), '12345678901234567890');
  const secret = newTotpSecret();
  t.regex(secret, /^[A-Z2-7]{32}$/);
  t.is(base32Decode(secret).length, 20);
  t.not(newTotpSecret(), secret);
});

test('a code of the step before, the current step or the step after is accepted, with its step', (t) => {
  const at = new Date(1_700_000_015_000);
  const now = totpStep(at);
  for (const step of [now - 1, now, now + 1]) t.is(matchTotpStep(RFC_SECRET, totpCode(RFC_SECRET, step), at), step);
});

test('a code two steps away is refused', (t) => {
  const at = new Date(1_700_000_015_000);
  const now = totpStep(at);
  for (const step of [now - 2, now + 2, now - 100]) t.is(matchTotpStep(RFC_SECRET, totpCode(RFC_SECRET, step), at), null);
});

test('anything but six digits is refused, and another secret’s code too', (t) => {
  const at = new Date(1_700_000_015_000);
  const code = totpCode(RFC_SECRET, totpStep(at));
  for (const bad of ['', code.slice(0, 5), `${code}0`, ` ${code}`, `${code} `, code.replace(/^\d/, 'a'), '------']) {
    t.is(matchTotpStep(RFC_SECRET, bad, at), null, JSON.stringify(bad));
  }
  const other = base32Encode(Buffer.from('another twenty bytes', 'ascii'));
  t.not(totpCode(other, totpStep(at)), code);
  t.is(matchTotpStep(other, code, at), null);
});

test('the otpauth URL names the issuer, the account email and the parameters an app needs', (t) => {
  const url = new URL(otpauthUrl(RFC_SECRET, 'ann+shop@example.com'));
  t.is(url.protocol, 'otpauth:');
  t.is(url.host, 'totp');
  t.is(decodeURIComponent(url.pathname), '/Coinkeep:ann+shop@example.com');
  t.is(url.searchParams.get('secret'), RFC_SECRET);
  t.is(url.searchParams.get('issuer'), 'Coinkeep');
  t.is(url.searchParams.get('algorithm'), 'SHA1');
  t.is(url.searchParams.get('digits'), '6');
  t.is(url.searchParams.get('period'), '30');
});
