import test from 'ava';
import { ApiError } from '../../../src/shared/errors';
import { COINKEEP_BIN, runBin } from '../../helpers/cli';
import { cliConfigFile, merchantWithKey, startTestDaemon, type TestDaemon } from '../../helpers/daemon';

/**
 * SPEC "Limits", sensitive operations: API-key changes in the cabinet have their own limit, counted
 * per person, merchant and key (docs/decisions.md); over it the change is 429 `rate_limited` with
 * `details.scope` and `Retry-After`, and nothing is created. The CLI says so in one line.
 */

let d: TestDaemon;
let configFile: string;

test.before(async () => {
  d = await startTestDaemon();
  configFile = cliConfigFile(d);
});
test.after.always(async () => {
  await d?.stop();
});

const newKey = (name: string) => ({ name, permissions: ['read'], ip_whitelist: [], rate_limit_per_minute: 600 });

test('key changes over the per-person limit are 429 rate_limited scope person, with Retry-After, and create nothing', async (t) => {
  const m = await merchantWithKey(d.daemon);
  for (let i = 2; i <= 10; i++) await d.daemon.keys.create(m.accountId, { email: m.owner }, newKey(`key ${i}`));
  t.is((await d.daemon.keys.list(m.accountId)).length, 10);

  const refused = await t.throwsAsync(d.daemon.keys.create(m.accountId, { email: m.owner }, newKey('one too many')), { instanceOf: ApiError });
  t.is(refused.status, 429);
  t.is(refused.code, 'rate_limited');
  t.is(refused.details.scope, 'person');
  const retry = Number(refused.details.retry_after);
  t.true(Number.isInteger(retry) && retry > 0 && retry <= 60, String(retry));
  t.is(refused.headers['Retry-After'], String(retry));

  // Other changes by the same person are refused too while the block lasts; the key stays as it was.
  const before = await d.daemon.keys.show(m.accountId, m.keyId);
  const rotate = await t.throwsAsync(d.daemon.keys.rotate(m.accountId, m.keyId, { email: m.owner }), { instanceOf: ApiError });
  t.is(rotate.code, 'rate_limited');
  t.deepEqual(await d.daemon.keys.show(m.accountId, m.keyId), before);

  // Through the CLI: one line on stderr naming the code and when to retry, a non-zero exit.
  const cli = await runBin(COINKEEP_BIN, [
    '--config',
    configFile,
    'keys',
    'create',
    '--account',
    m.accountId,
    '--as',
    m.owner,
    '--name',
    'cli',
    '--permissions',
    'read',
  ]);
  t.not(cli.code, 0);
  t.is(cli.stdout, '');
  t.regex(cli.stderr, /^coinkeep: .*\(retry in \d+ s\) \[rate_limited\]\n$/);
  t.is((await d.daemon.keys.list(m.accountId)).length, 10, 'nothing was created');
});

test('the limit is per person: another merchant’s owner is not held back', async (t) => {
  const busy = await merchantWithKey(d.daemon);
  for (let i = 2; i <= 10; i++) await d.daemon.keys.create(busy.accountId, { email: busy.owner }, newKey(`key ${i}`));
  await t.throwsAsync(d.daemon.keys.create(busy.accountId, { email: busy.owner }, newKey('refused')), { instanceOf: ApiError });

  const other = await merchantWithKey(d.daemon);
  const created = await d.daemon.keys.create(other.accountId, { email: other.owner }, newKey('fine'));
  t.regex(created.key.key_id, /^ck_live_/);
});
