import test from 'ava';
import { randomUUID } from 'node:crypto';
import { newRouter } from '../../../src/http/context';
import { FakeClock } from '../../../src/shared/clock';
import { freshSourceIp, SignedClient } from '../../helpers/api-client';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';

/** SPEC "Idempotency (POST)" 1: a key is remembered for 24 hours, then a repeat runs as new. */

test('an Idempotency-Key is remembered for 24 hours per API key, then forgotten', async (t) => {
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  let runs = 0;
  const d = await startTestDaemon(
    {},
    {
      clock,
      extraRouters: ({ authenticate, idempotent }) => {
        const r = newRouter('/test');
        r.post('/create', authenticate('create_invoice'), idempotent, (ctx) => {
          runs++;
          ctx.status = 201;
          ctx.body = { id: randomUUID() };
        });
        return [r];
      },
    },
  );
  t.teardown(() => d.stop());
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret, clock);
  const from = freshSourceIp();
  const send = () => client.post('/test/create', { n: 1 }, { from, headers: { 'Idempotency-Key': 'daily-1' } });

  const first = await send();
  t.is(first.status, 201);
  clock.advance(24 * 3600 * 1000 - 1000);
  const within = await send();
  t.is(within.headers['idempotent-replayed'], 'true');
  t.is(within.json.id, first.json.id);

  clock.advance(2000);
  const after = await send();
  t.is(after.status, 201, after.text);
  t.is(after.headers['idempotent-replayed'], undefined);
  t.not(after.json.id, first.json.id);
  t.is(runs, 2);
});
