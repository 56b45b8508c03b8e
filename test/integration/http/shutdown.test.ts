import test from 'ava';
import { randomUUID } from 'node:crypto';
import { newRouter } from '../../../src/http/context';
import { call, freshSourceIp, SignedClient } from '../../helpers/api-client';
import { until } from '../../helpers/cli';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';

/**
 * Issue 2 §4, `stop`: SIGTERM lets in-flight requests finish before the store closes, and takes no
 * new ones. The daemon's stop() is what the SIGTERM handler of `coinkeep run` calls.
 */

test('stopping lets an in-flight request finish with its answer, and refuses new connections', async (t) => {
  let release!: () => void;
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const d = await startTestDaemon(
    {},
    {
      extraRouters: ({ authenticate, idempotent }) => {
        const r = newRouter('/test');
        r.post('/slow', authenticate('create_invoice'), idempotent, async (ctx) => {
          entered();
          await new Promise<void>((resolve) => (release = resolve));
          // The store is still open while the request finishes.
          ctx.status = 201;
          ctx.body = { id: randomUUID(), accounts: (await d.daemon.team.listAccounts()).length };
        });
        return [r];
      },
    },
  );
  const m = await merchantWithKey(d.daemon);
  const client = new SignedClient(d.url, m.keyId, m.secret);
  const from = freshSourceIp();

  const answer = client.post('/test/slow', {}, { from, headers: { 'Idempotency-Key': 'slow-1' } });
  await inside;
  let stopped = false;
  const stopping = d.stop().then(() => (stopped = true));
  // Stopping has begun once a new connection is refused; the request in flight still holds it.
  await until(
    () =>
      call(d.url, '/healthz').then(
        () => false,
        () => true,
      ),
    10000,
    'new connections to be refused',
  );
  t.false(stopped, 'stop waits for the request in flight');

  release();
  const res = await answer;
  t.is(res.status, 201, res.text);
  t.is(res.json.accounts, 1);
  await stopping;
  t.true(stopped);
});
