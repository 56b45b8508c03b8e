import type { EntityManager } from 'typeorm';
import type { EventRow } from '../db/entities/events';
import { insertRows, list } from '../db/batch-statements';
import { placeholder, returning } from '../db/raw';
import { WebhookEndpointEntity, type WebhookDeliveryRow, type WebhookEndpointRow } from '../db/entities/webhooks';
import { newTimeOrderedId } from '../shared/ids';
import type { CallbackSecrets } from './callback-secret';
import { subscribes } from './endpoint.request';

/**
 * Turns outbox rows into deliveries, in one transaction: one delivery per (event, enabled endpoint
 * subscribed to its type), a ping only to the endpoint it names, and one more for an invoice.*
 * event whose invoice has its own webhook_url. The guarded `dispatched_at` update makes each event
 * fan out exactly once.
 */
export async function fanOut(
  em: EntityManager,
  events: Array<Omit<EventRow, 'body'>>,
  now: string,
  callbackSecrets: CallbackSecrets,
): Promise<WebhookDeliveryRow[]> {
  const accounts = [...new Set(events.map((e) => e.account_id))];
  const endpoints = await em
    .createQueryBuilder(WebhookEndpointEntity, 'e')
    .where('e.account_id IN (:...accounts)', { accounts })
    .andWhere('e.enabled = :enabled', { enabled: true })
    .getMany();
  const byAccount = new Map<string, Array<WebhookEndpointRow & { types: string[] }>>();
  for (const e of endpoints) {
    const list = byAccount.get(e.account_id) ?? [];
    list.push({ ...e, types: JSON.parse(e.event_types) as string[] });
    byAccount.set(e.account_id, list);
  }

  // One guarded update for the batch: only the rows still undispatched come back, so each event
  // fans out once even if another daemon on the same database scans the outbox too.
  const ids = events.map((e) => e.id);
  const claimed = new Set(
    (
      await returning<{ id: string }>(
        em,
        `UPDATE events SET dispatched_at = ${placeholder(em, 1)} WHERE id IN (${list(em, ids.length, 2)}) AND dispatched_at IS NULL RETURNING id`,
        [now, ...ids],
      )
    ).map((r) => r.id),
  );
  const deliveries: WebhookDeliveryRow[] = [];
  // Time-ordered ids: a burst of deliveries (and their attempts) lands at the end of each index.
  const nowMs = Date.parse(now);
  const withCallbackSecret = new Set<string>();
  for (const event of events) {
    if (!claimed.has(event.id)) continue;
    const delivery = (endpointId: string | null, url: string): WebhookDeliveryRow => ({
      id: newTimeOrderedId(nowMs),
      account_id: event.account_id,
      event_id: event.id,
      event_type: event.type,
      endpoint_id: endpointId,
      url,
      status: 'pending',
      attempts: 0,
      schedule_attempts: 0,
      next_attempt_at: now,
      last_response_status: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    });
    for (const e of byAccount.get(event.account_id) ?? []) {
      const wanted = event.type === 'ping' ? e.id === event.object_id : subscribes(e.types, event.type);
      if (wanted) deliveries.push(delivery(e.id, e.url));
    }
    if (event.callback_url !== null && event.type.startsWith('invoice.')) {
      if (!withCallbackSecret.has(event.account_id)) await callbackSecrets.ensure(em, event.account_id);
      withCallbackSecret.add(event.account_id);
      deliveries.push(delivery(null, event.callback_url));
    }
  }
  await insertRows(em, 'webhook_deliveries', deliveries);
  return deliveries;
}
