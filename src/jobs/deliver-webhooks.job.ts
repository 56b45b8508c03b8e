import type { WebhookDispatcher } from '../webhooks/dispatcher';
import type { Job } from './scheduler';

/** Every second: fans out new outbox rows and starts deliveries whose attempt fell due (retries, and anything missed while down). */
export function deliverWebhooksJob(dispatcher: WebhookDispatcher): Job {
  return { name: 'deliver-webhooks', schedule: { everyMs: 1000 }, run: () => dispatcher.tick() };
}
