import test, { type ExecutionContext } from 'ava';
import { WebhookEndpointEntity } from '../../../src/db/entities/webhooks';
import { merchantWithKey, startTestDaemon } from '../../helpers/daemon';
import { ApiClient } from '../../helpers/invoice-fixture';
import { tempPostgres } from '../../helpers/pg-database';

/** 19 endpoints, then 10 creates at once: one gets the 20th slot, the other nine 409 endpoint_limit. */
async function racedCreates(t: ExecutionContext, overrides: Record<string, unknown>): Promise<void> {
  const td = await startTestDaemon(overrides);
  t.teardown(() => td.stop());
  const m = await merchantWithKey(td.daemon);
  const api = new ApiClient(td.url, m.keyId, m.secret);
  for (let i = 0; i < 19; i++) {
    const res = await api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:9/e${i}`, event_types: ['*'] });
    t.is(res.status, 201);
  }
  const count = () => td.daemon.store.read.count(WebhookEndpointEntity, { where: { account_id: m.accountId } });
  // Rounds, as the race is a matter of timing: each starts at 19 and deletes the 20th it made.
  for (let round = 0; round < 5; round++) {
    const raced = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:9/r${round}-${i}`, event_types: ['*'] })),
    );
    t.deepEqual(raced.map((r) => r.status).sort(), [201, ...Array<number>(9).fill(409)], `round ${round}`);
    for (const r of raced.filter((x) => x.status === 409)) t.like(r.body, { error: { code: 'conflict', details: { reason: 'endpoint_limit' } } });
    t.is(await count(), 20);
    const made = raced.find((r) => r.status === 201)!;
    t.is((await api.call('DELETE', `/v1/webhooks/endpoints/${made.body.id}`)).status, 200);
  }
}

test('on SQLite, ten parallel creates at 19 endpoints make exactly the 20th', async (t) => {
  await racedCreates(t, {});
});

test('on PostgreSQL, ten parallel creates at 19 endpoints make exactly the 20th', async (t) => {
  const url = await tempPostgres(t);
  await racedCreates(t, { database: { url } });
});
