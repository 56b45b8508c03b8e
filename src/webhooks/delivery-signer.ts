import { createSecretKey, type KeyObject } from 'node:crypto';
import { unixSeconds } from '../shared/clock';
import { targetOf, type Claimed } from './attempt.store';
import type { CallbackSecrets } from './callback-secret';
import type { WebhookSecrets } from './secrets';
import type { WebhookPost } from './transport';
import { signWebhook } from './verify';

export const WEBHOOK_USER_AGENT = 'Service-Webhooks/1.0';

export interface OutgoingEvent {
  id: string;
  type: string;
  /** The body exactly as the outbox stored it: sent and signed byte for byte. */
  body: string;
}

/**
 * The POST of an event as SPEC "Events" has it: X-Signature over X-Timestamp (from `now`, the
 * dispatcher's clock) and the body. `target` and `account` are the dispatcher's keys for the bounds.
 */
export function signedPost(url: string, event: OutgoingEvent, secret: string | KeyObject, now: Date, target = url, account = ''): WebhookPost {
  const timestamp = String(unixSeconds(now));
  const body = event.body;
  return {
    url,
    body,
    target,
    account,
    headers: {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body, 'utf8')),
      'User-Agent': WEBHOOK_USER_AGENT,
      'X-Event-Id': event.id,
      'X-Event-Type': event.type,
      'X-Timestamp': timestamp,
      'X-Signature': signWebhook(secret, timestamp, body),
    },
  };
}

const KEYS_KEPT = 1000;

/**
 * The loop's signing step: a claimed attempt becomes its signed POST, with the endpoint's secret
 * (sealed in the claim) or the account's invoice-callback secret for an invoice webhook_url.
 */
export class DeliverySigner {
  /** Signing keys made once per secret (importing the key is a good part of an HMAC's cost); a full cache starts over. */
  private readonly keys = new Map<string, KeyObject>();

  constructor(private readonly deps: { secrets: WebhookSecrets; callbackSecrets: CallbackSecrets }) {}

  async sign(c: Claimed, now: Date): Promise<WebhookPost> {
    const d = c.delivery;
    const secret =
      d.endpoint_id !== null && c.sealedSecret !== null
        ? this.deps.secrets.openEndpoint(d.endpoint_id, c.sealedSecret)
        : await this.deps.callbackSecrets.secretFor(d.account_id);
    return signedPost(d.url, { id: d.event_id, type: d.event_type, body: c.body }, this.keyOf(secret), now, targetOf(d), d.account_id);
  }

  private keyOf(secret: string): KeyObject {
    let key = this.keys.get(secret);
    if (!key) {
      if (this.keys.size >= KEYS_KEPT) this.keys.clear();
      key = createSecretKey(Buffer.from(secret, 'utf8'));
      this.keys.set(secret, key);
    }
    return key;
  }
}
