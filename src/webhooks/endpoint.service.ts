import { WebhookDeliveryEntity, WebhookEndpointEntity, type WebhookEndpointRow } from '../db/entities/webhooks';
import { applyKeyset } from '../db/keyset';
import { lockRow } from '../db/raw';
import type { Store } from '../db/store';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import { iso, type Clock } from '../shared/clock';
import { conflict, notFound } from '../shared/errors';
import { newId } from '../shared/ids';
import type { EndpointInput } from './endpoint.request';
import { last4, newWebhookSecret, type WebhookSecrets } from './secrets';
import { presentEndpoint, type EndpointView } from './endpoint.view';

/** How many endpoints one account may have. */
export const MAX_ENDPOINTS = 20;

/** Webhook endpoints of PRODUCT §10: one account's, never another's (another's id is not_found). */
export class EndpointService {
  constructor(
    private readonly deps: {
      store: Store;
      secrets: WebhookSecrets;
      clock: Clock;
      /** Told after a change commits, so attempts already claimed do not go out with old values. */
      changed: (endpointId: string) => void;
    },
  ) {}

  async create(accountId: string, input: EndpointInput & { url: string; event_types: string[] }): Promise<EndpointView & { secret: string }> {
    const secret = input.secret ?? newWebhookSecret();
    const now = iso(this.deps.clock.now());
    const id = newId();
    const row: WebhookEndpointRow = {
      id,
      account_id: accountId,
      url: input.url,
      event_types: JSON.stringify(input.event_types),
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      secret_sealed: this.deps.secrets.sealEndpoint(id, secret),
      secret_last4: last4(secret),
      created_at: now,
      updated_at: now,
    };
    await this.deps.store.write(async (em) => {
      // Creates of one account take turns, so two of them never both pass the count.
      await lockRow(em, 'accounts', accountId);
      const count = await em.count(WebhookEndpointEntity, { where: { account_id: accountId } });
      if (count >= MAX_ENDPOINTS) throw conflict(`an account has at most ${MAX_ENDPOINTS} webhook endpoints`, { reason: 'endpoint_limit' });
      await em.insert(WebhookEndpointEntity, row);
    });
    return { ...presentEndpoint(row), secret };
  }

  async list(accountId: string, page: PageRequest): Promise<Page<EndpointView>> {
    const qb = this.deps.store.read.createQueryBuilder(WebhookEndpointEntity, 'e').where('e.account_id = :accountId', { accountId });
    return toPage(await applyKeyset(qb, 'e', page).getMany(), page, presentEndpoint);
  }

  async get(accountId: string, id: string): Promise<EndpointView> {
    return presentEndpoint(await this.find(accountId, id));
  }

  /** The row itself (the dispatcher and ping need it); not_found for another account's id. */
  async find(accountId: string, id: string): Promise<WebhookEndpointRow> {
    const row = await this.deps.store.read.findOne(WebhookEndpointEntity, { where: { id, account_id: accountId } });
    if (!row) throw notFound('webhook endpoint');
    return row;
  }

  async update(accountId: string, id: string, input: EndpointInput): Promise<EndpointView> {
    const view = await this.deps.store.write(async (em) => {
      const row = await em.findOne(WebhookEndpointEntity, { where: { id, account_id: accountId } });
      if (!row) throw notFound('webhook endpoint');
      const patch: Partial<WebhookEndpointRow> = { updated_at: iso(this.deps.clock.now()) };
      if (input.url !== undefined) patch.url = input.url;
      if (input.event_types !== undefined) patch.event_types = JSON.stringify(input.event_types);
      if (input.description !== undefined) patch.description = input.description;
      if (input.enabled !== undefined) patch.enabled = input.enabled;
      await em.update(WebhookEndpointEntity, { id }, patch);
      return presentEndpoint({ ...row, ...patch });
    });
    this.deps.changed(id);
    return view;
  }

  /**
   * Deletes the endpoint. Its deliveries stay in the log; those still waiting stop, as there is
   * no longer a secret to sign them with.
   */
  async remove(accountId: string, id: string): Promise<{ id: string; deleted: true }> {
    await this.deps.store.write(async (em) => {
      const row = await em.findOne(WebhookEndpointEntity, { where: { id, account_id: accountId } });
      if (!row) throw notFound('webhook endpoint');
      const now = iso(this.deps.clock.now());
      await em
        .createQueryBuilder()
        .update(WebhookDeliveryEntity)
        .set({ status: 'failed', next_attempt_at: null, last_error: 'the endpoint was deleted', updated_at: now })
        .where('endpoint_id = :id AND status IN (:...open)', { id, open: ['pending', 'failed'] })
        .execute();
      await em.delete(WebhookEndpointEntity, { id });
    });
    this.deps.changed(id);
    return { id, deleted: true };
  }

  /** A new secret (given or generated); the old one stops signing at once. */
  async rotateSecret(accountId: string, id: string, given?: string): Promise<EndpointView & { secret: string }> {
    const secret = given ?? newWebhookSecret();
    const view = await this.deps.store.write(async (em) => {
      const row = await em.findOne(WebhookEndpointEntity, { where: { id, account_id: accountId } });
      if (!row) throw notFound('webhook endpoint');
      const patch = { secret_sealed: this.deps.secrets.sealEndpoint(id, secret), secret_last4: last4(secret), updated_at: iso(this.deps.clock.now()) };
      await em.update(WebhookEndpointEntity, { id }, patch);
      return { ...presentEndpoint({ ...row, ...patch }), secret };
    });
    this.deps.changed(id);
    return view;
  }
}
