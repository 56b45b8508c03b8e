import test from 'ava';
import { WebhookDeliveryEntity } from '../../../src/db/entities/webhooks';
import { until } from '../../helpers/cli';
import { tempPostgres } from '../../helpers/pg-database';
import { deliveryProblems } from '../../helpers/webhook-verifier';
import { startWebhookFixture } from '../../helpers/webhook-fixture';

test('on PostgreSQL: fan-out, claims, outcomes, refills past a queue, a retry and a ping work the same', async (t) => {
  const url = await tempPostgres(t);
  const f = await startWebhookFixture({ overrides: { database: { url } } });
  t.teardown(() => f.stop());
  const ok = await f.endpoint('/pg-ok', { types: ['deposit.pending'] });
  const down = await f.endpoint('/pg-down', { behaviour: 500, types: ['withdrawal.failed'] });
  const ids: string[] = [];
  for (let i = 0; i < 70; i++) ids.push(await f.emit('deposit.pending', { n: i }));
  await until(async () => (await f.deliveries({ endpoint_id: ok.id, status: 'succeeded' })).length === 70);
  t.is(f.sink.at('/pg-ok').length, 70);
  t.deepEqual(deliveryProblems(f.sink.at('/pg-ok')[0]!, ok.secret), []);

  const failedEvent = await f.emit('withdrawal.failed', { withdrawal: { id: 'w' } });
  const failed = await f.settled(failedEvent, down.id, 'failed');
  const pending = await f.api.post(`/v1/webhooks/deliveries/${failed.id}/retry`, {});
  t.is(pending.status, 200);
  await f.sink.waitFor('/pg-down', 2);
  const again = await f.settled(failedEvent, down.id, 'failed');
  t.is(again.attempts, 2);

  const ping = await f.td.daemon.webhooks.deliveries.ping(f.accountId, ok.id, 'pg');
  await f.settled(ping.event_id, ok.id, 'succeeded');
  t.is(await f.td.daemon.store.read.count(WebhookDeliveryEntity, {}), 72);
});
