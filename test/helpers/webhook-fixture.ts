import type { FindOptionsWhere } from 'typeorm';
import { WebhookDeliveryEntity, type WebhookDeliveryRow } from '../../src/db/entities/webhooks';
import type { DaemonOptions } from '../../src/daemon/main';
import type { Clock } from '../../src/shared/clock';
import type { EventType } from '../../src/shared/events';
import { until } from './cli';
import { IdleChain } from './idle-chain';
import { merchantWithKey, startTestDaemon, type TestDaemon } from './daemon';
import { ApiClient } from './invoice-fixture';
import { WebhookSink, type SinkBehaviour } from './webhook-sink';

export interface WebhookFixture {
  td: TestDaemon;
  sink: WebhookSink;
  api: ApiClient;
  accountId: string;
  /** An endpoint on the sink at `path`; returns its id and secret. */
  endpoint(path: string, opts?: { behaviour?: SinkBehaviour; types?: string[]; secret?: string }): Promise<{ id: string; secret: string; url: string }>;
  /** A state change's event, written to the outbox as the domain writes it. */
  emit(type: EventType, data?: Record<string, unknown>, opts?: { callbackUrl?: string; objectId?: string; accountId?: string }): Promise<string>;
  deliveries(where?: Partial<WebhookDeliveryRow>): Promise<WebhookDeliveryRow[]>;
  /** Polls until the delivery of `eventId` (to `endpointId`, or the invoice webhook_url with null) matches `status`. */
  settled(eventId: string, endpointId: string | null, status: string, timeoutMs?: number): Promise<WebhookDeliveryRow>;
  stop(): Promise<void>;
}

export async function startWebhookFixture(
  opts: { clock?: Clock; overrides?: Record<string, unknown>; daemon?: Pick<DaemonOptions, 'webhooks' | 'adapterFor'> } = {},
): Promise<WebhookFixture> {
  const sink = await WebhookSink.start();
  // Chains are idle nodes unless a test brings its own (their URLs lead nowhere: maintenance).
  const td = await startTestDaemon(opts.overrides ?? {}, { clock: opts.clock, adapterFor: (chain) => new IdleChain(chain.id), ...opts.daemon });
  const m = await merchantWithKey(td.daemon);
  const clock = opts.clock ?? { now: () => new Date() };
  const api = new ApiClient(td.url, m.keyId, m.secret, clock);
  const deliveries = (where: Partial<WebhookDeliveryRow> = {}) =>
    td.daemon.store.read.find(WebhookDeliveryEntity, { where: { ...where } as FindOptionsWhere<WebhookDeliveryRow>, order: { created_at: 'ASC', id: 'ASC' } });
  return {
    td,
    sink,
    api,
    accountId: m.accountId,
    endpoint: async (path, o = {}) => {
      const url = sink.url(path, o.behaviour ?? 'ok');
      const res = await api.post('/v1/webhooks/endpoints', { url, event_types: o.types ?? ['*'], ...(o.secret ? { secret: o.secret } : {}) });
      if (res.status !== 201) throw new Error(`endpoint create answered ${res.status}: ${JSON.stringify(res.body)}`);
      return { id: res.body.id, secret: res.body.secret, url };
    },
    emit: async (type, data = {}, o = {}) =>
      (
        await td.daemon.store.write((em) =>
          td.daemon.outbox.emit(em, {
            accountId: o.accountId ?? m.accountId,
            type,
            data,
            objectId: o.objectId ?? null,
            callbackUrl: o.callbackUrl ?? null,
            at: clock.now(),
          }),
        )
      ).id,
    deliveries,
    settled: (eventId, endpointId, status, timeoutMs = 15000) =>
      until(
        async () => (await deliveries({ event_id: eventId })).find((d) => d.endpoint_id === endpointId && d.status === status),
        timeoutMs,
        `delivery of ${eventId} to be ${status}`,
      ),
    stop: async () => {
      await td.stop();
      await sink.close();
    },
  };
}
