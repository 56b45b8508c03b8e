import test from 'ava';
import { DEFAULT_LIMITS } from '../../../src/webhooks/dispatcher';
import { merchantWithKey } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';
import { startWebhookFixture } from '../../helpers/webhook-fixture';

test("one account's receivers that hang for the whole 10 s do not delay another account's deliveries beyond a second", async (t) => {
  const f = await startWebhookFixture();
  t.teardown(() => f.stop());
  // Enough hanging endpoints to fill every slot of the daemon at 8 each.
  const hanging = DEFAULT_LIMITS.maxInFlight / DEFAULT_LIMITS.perTarget;
  const paths = Array.from({ length: hanging }, (_, i) => `/hangs-${i}`);
  for (const p of paths) await f.endpoint(p, { behaviour: 'hang', types: ['deposit.pending'] });
  const other = await merchantWithKey(f.td.daemon);
  const otherApi = new ApiClient(f.td.url, other.keyId, other.secret);
  t.is((await otherApi.post('/v1/webhooks/endpoints', { url: f.sink.url('/other-account'), event_types: ['deposit.pending'] })).status, 201);

  for (let i = 0; i < 10; i++) await f.emit('deposit.pending', { n: i });
  const arrived = () => paths.reduce((n, p) => n + f.sink.at(p).length, 0);
  const deadline = Date.now() + 5000;
  while (arrived() < DEFAULT_LIMITS.perAccount) {
    if (Date.now() > deadline) throw new Error(`${arrived()} attempts reached the hanging receivers`);
    await new Promise((r) => setTimeout(r, 10));
  }

  const started = Date.now();
  await f.emit('deposit.pending', { other: true }, { accountId: other.accountId });
  await f.sink.waitFor('/other-account', 1, 1000);
  t.true(Date.now() - started < 1000);
  t.true(arrived() <= DEFAULT_LIMITS.perAccount, `${arrived()} attempts of one account in flight`);
  f.sink.release();
});
