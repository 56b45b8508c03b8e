import { rmSync } from 'node:fs';
import test, { type ExecutionContext } from 'ava';
import type { Config } from '../../../src/config/schema';
import { startDaemon, type Daemon } from '../../../src/daemon/main';
import { WebhookAttemptEntity, WebhookDeliveryEntity } from '../../../src/db/entities/webhooks';
import { Store } from '../../../src/db/store';
import { FakeClock } from '../../../src/shared/clock';
import { silentLogger } from '../../../src/shared/logger';
import { RETRY_DELAYS_MS } from '../../../src/webhooks/retry-schedule';
import { until } from '../../helpers/cli';
import { startWebhookFixture } from '../../helpers/webhook-fixture';

const MIN = 60_000;

/**
 * Runs dispatcher passes to their end (every attempt they started answered and recorded), twice so
 * the second reads what the first wrote: whatever was due has been sent when it returns.
 */
async function passesDone(daemon: Daemon): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await daemon.webhooks.dispatcher.tick();
    await daemon.webhooks.dispatcher.idle();
  }
}

/**
 * A fixture on a fake clock whose daemon a test stops and starts again on the same data dir:
 * `restart(between)` stops it, runs `between` (with the daemon's config) while it is down, and
 * starts it again. The teardown stops whichever daemon is running.
 */
async function restartableFixture(t: ExecutionContext) {
  const clock = new FakeClock(Date.now());
  const f = await startWebhookFixture({ clock });
  let daemon = f.td.daemon;
  t.teardown(async () => {
    await daemon.stop();
    await f.sink.close();
    rmSync(f.td.dataDir, { recursive: true, force: true });
  });
  const restart = async (between: (config: Config) => Promise<void> = async () => {}): Promise<Daemon> => {
    await daemon.stop();
    await between(daemon.config);
    daemon = await startDaemon(daemon.config, { clock, logger: silentLogger });
    return daemon;
  };
  return { clock, f, restart };
}

test.serial('a failing receiver gets 7 attempts on the schedule, none early, then the delivery is exhausted', async (t) => {
  const clock = new FakeClock(Date.now());
  const f = await startWebhookFixture({ clock });
  t.teardown(() => f.stop());
  const ep = await f.endpoint('/down', { behaviour: 500 });
  const eventId = await f.emit('withdrawal.failed', { withdrawal: { id: 'w1' } });
  let d = await f.settled(eventId, ep.id, 'failed');
  for (const [i, wait] of RETRY_DELAYS_MS.entries()) {
    const sent = i + 1;
    t.is(Date.parse(d.next_attempt_at!) - clock.now().getTime(), wait);
    clock.advance(wait - 1000);
    await passesDone(f.td.daemon);
    t.is(f.sink.at('/down').length, sent, `no attempt ${sent + 1} before its time`);
    clock.advance(1000);
    // The dispatcher polls every second; a pump now saves the wait.
    void f.td.daemon.webhooks.dispatcher.tick();
    await f.sink.waitFor('/down', sent + 1);
    d = await f.settled(eventId, ep.id, sent + 1 === 7 ? 'exhausted' : 'failed');
    t.is(d.attempts, sent + 1);
  }
  t.is(d.next_attempt_at, null);
  clock.advance(48 * 60 * MIN);
  await passesDone(f.td.daemon);
  t.is(f.sink.at('/down').length, 7);
  const log = await f.api.get(`/v1/webhooks/deliveries/${d.id}`);
  t.like(log.body, { status: 'exhausted', attempts: 7, last_response_status: 500 });
  t.deepEqual(
    log.body.attempt_log.map((a: { number: number }) => a.number),
    [1, 2, 3, 4, 5, 6, 7],
  );
  const listed = await f.api.get('/v1/webhooks/deliveries?status=exhausted');
  t.deepEqual(
    listed.body.items.map((x: { id: string }) => x.id),
    [d.id],
  );

  // A retry of an exhausted delivery resends it now, with a fresh schedule.
  f.sink.set('/down', 'ok');
  t.is((await f.api.post(`/v1/webhooks/deliveries/${d.id}/retry`, {})).status, 200);
  d = await f.settled(eventId, ep.id, 'succeeded');
  t.is(d.attempts, 8);
});

test.serial('after a restart the attempt that fell due meanwhile is sent once, and the schedule goes on from it', async (t) => {
  const { clock, f, restart } = await restartableFixture(t);
  let daemon = f.td.daemon;
  const ep = await f.endpoint('/restart', { behaviour: 503 });
  const eventId = await f.emit('invoice.paid', { invoice: { id: 'i1' } });
  await f.settled(eventId, ep.id, 'failed');
  daemon = await restart(async () => clock.advance(10 * MIN));
  await f.sink.waitFor('/restart', 2);
  await passesDone(daemon);
  t.is(f.sink.at('/restart').length, 2, 'the missed attempt was sent exactly once');
  const [d] = await daemon.store.read.find(WebhookDeliveryEntity, { where: { event_id: eventId } });
  t.like(d, { status: 'failed', attempts: 2 });
  t.is(Date.parse(d!.next_attempt_at!) - clock.now().getTime(), 5 * MIN);
});

test.serial('an attempt cut short by a stop is recorded, and one left unfinished by a crash is recorded at start; neither is sent again early', async (t) => {
  const { clock, f, restart } = await restartableFixture(t);
  let daemon = f.td.daemon;
  const ep = await f.endpoint('/stall', { behaviour: 'hang' });
  const eventId = await f.emit('deposit.pending', { n: 1 });
  await f.sink.waitFor('/stall', 1);
  daemon = await restart(async (config) => {
    const store = await Store.open({ url: config.database.url });
    const [stopped] = await store.read.find(WebhookDeliveryEntity, { where: { event_id: eventId } });
    t.like(stopped, { status: 'failed', attempts: 1, last_error: 'interrupted: the daemon stopped during the attempt' });
    // What a crash during that attempt leaves: the claim (counted, next attempt planned), no attempt row.
    await store.write(async (em) => {
      await em.update(WebhookDeliveryEntity, { id: stopped!.id }, { status: 'pending', last_error: null });
      await em.delete(WebhookAttemptEntity, { delivery_id: stopped!.id });
    });
    await store.close();
  });
  const [d] = await daemon.store.read.find(WebhookDeliveryEntity, { where: { event_id: eventId } });
  t.like(d, { status: 'failed', attempts: 1, last_error: 'interrupted: the daemon stopped during the attempt' });
  const [a] = await daemon.store.read.find(WebhookAttemptEntity, { where: { delivery_id: d!.id } });
  t.truthy(a!.finished_at);
  await passesDone(daemon);
  t.is(f.sink.at('/stall').length, 1);
  f.sink.set('/stall', 'ok');
  clock.advance(MIN);
  await f.sink.waitFor('/stall', 2);
  const done = await until(
    async () => (await daemon.store.read.find(WebhookDeliveryEntity, { where: { event_id: eventId, endpoint_id: ep.id, status: 'succeeded' } }))[0],
  );
  t.is(done.attempts, 2);
});

test.serial('at a stop, attempts claimed but not yet sent are given back uncounted and go out after the restart', async (t) => {
  const { clock, f, restart } = await restartableFixture(t);
  let daemon = f.td.daemon;
  const ep = await f.endpoint('/busy', { behaviour: 'hang', types: ['deposit.confirmed'] });
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await f.emit('deposit.confirmed', { n: i }));
  await f.sink.waitFor('/busy', 8);
  daemon = await restart(async () => {
    t.is(f.sink.at('/busy').length, 8, 'no more than 8 in flight to one endpoint');
    f.sink.set('/busy', 'ok');
  });
  await until(async () => (await daemon.store.read.count(WebhookDeliveryEntity, { where: { endpoint_id: ep.id, status: 'succeeded' } })) === 12);
  const rows = await daemon.store.read.find(WebhookDeliveryEntity, { where: { endpoint_id: ep.id } });
  t.is(rows.filter((r) => r.status === 'failed' && r.attempts === 1 && r.last_error === 'interrupted: the daemon stopped during the attempt').length, 8);
  t.true(
    rows.filter((r) => r.status === 'succeeded').every((r) => r.attempts === 1),
    'a claim given back was not counted',
  );
  const attempts = await daemon.store.read.count(WebhookAttemptEntity, {});
  t.is(attempts, 20);
  t.is(f.sink.at('/busy').length, 20);
});
