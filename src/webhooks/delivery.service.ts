import type { ParsedUrlQuery } from 'node:querystring';
import { WebhookAttemptEntity, WebhookDeliveryEntity, WebhookEndpointEntity, type DeliveryStatus, type WebhookDeliveryRow } from '../db/entities/webhooks';
import { applyKeyset } from '../db/keyset';
import type { Store } from '../db/store';
import type { Outbox } from '../events/outbox';
import { toPage, type Page, type PageRequest } from '../shared/pagination';
import { queryEnum, queryString, queryTime } from '../shared/query';
import { iso, type Clock } from '../shared/clock';
import { conflict, notFound, validationError } from '../shared/errors';
import { EVENT_TYPES } from '../shared/events';
import { isUuid } from '../shared/ids';
import { DELIVERY_STATUSES, presentDelivery, type AttemptView, type DeliveryView } from './delivery.view';

export interface DeliveryFilters {
  status?: DeliveryStatus;
  event_type?: string;
  endpoint_id?: string;
  /** Inclusive, normalised RFC 3339 UTC (created_at). */
  from?: string;
  /** Exclusive. */
  to?: string;
}

/** The filters of GET /v1/webhooks/deliveries (and of `coinkeep webhooks deliveries`). */
export function parseDeliveryFilters(q: ParsedUrlQuery): DeliveryFilters {
  const f: DeliveryFilters = {
    status: queryEnum(q, 'status', DELIVERY_STATUSES),
    event_type: queryEnum(q, 'event_type', EVENT_TYPES),
    endpoint_id: queryString(q, 'endpoint_id'),
    from: queryTime(q, 'from'),
    to: queryTime(q, 'to'),
  };
  if (f.endpoint_id !== undefined) {
    if (!isUuid(f.endpoint_id)) throw validationError('endpoint_id', 'endpoint_id must be a uuid');
    f.endpoint_id = f.endpoint_id.toLowerCase();
  }
  return f;
}

/** The delivery log (issue 7 §3): list, one delivery with its attempts, retry and replay. */
export class DeliveryService {
  constructor(private readonly deps: { store: Store; clock: Clock; outbox: Outbox; wake: () => void; fanOut: () => Promise<void> }) {}

  async list(accountId: string, filters: DeliveryFilters, page: PageRequest): Promise<Page<DeliveryView>> {
    const qb = this.deps.store.read.createQueryBuilder(WebhookDeliveryEntity, 'd').where('d.account_id = :accountId', { accountId });
    if (filters.status !== undefined) qb.andWhere('d.status = :status', { status: filters.status });
    if (filters.event_type !== undefined) qb.andWhere('d.event_type = :type', { type: filters.event_type });
    if (filters.endpoint_id !== undefined) qb.andWhere('d.endpoint_id = :endpointId', { endpointId: filters.endpoint_id });
    if (filters.from !== undefined) qb.andWhere('d.created_at >= :from', { from: filters.from });
    if (filters.to !== undefined) qb.andWhere('d.created_at < :to', { to: filters.to });
    return toPage(await applyKeyset(qb, 'd', page).getMany(), page, presentDelivery);
  }

  async get(accountId: string, id: string): Promise<DeliveryView & { attempt_log: AttemptView[] }> {
    const row = await this.find(accountId, id);
    const attempts = await this.deps.store.read.find(WebhookAttemptEntity, { where: { delivery_id: id }, order: { number: 'ASC' } });
    return {
      ...presentDelivery(row),
      attempt_log: attempts.map((a) => ({
        number: a.number,
        url: a.url,
        at: a.started_at,
        response_status: a.response_status,
        error: a.error,
        duration_ms: a.duration_ms,
      })),
    };
  }

  /**
   * Resend now with a fresh schedule: 409 conflict while the delivery is still pending (it is about
   * to be sent anyway), or when its endpoint was deleted.
   */
  async retry(accountId: string, id: string): Promise<DeliveryView> {
    const view = await this.deps.store.write(async (em) => {
      const row = await em.findOne(WebhookDeliveryEntity, { where: { id, account_id: accountId } });
      if (!row) throw notFound('webhook delivery');
      if (row.status === 'pending') throw conflict('the delivery is still pending; it is sent on its schedule', { reason: 'delivery_pending' });
      if (row.endpoint_id !== null && !(await em.findOne(WebhookEndpointEntity, { where: { id: row.endpoint_id } }))) {
        throw conflict('the endpoint of this delivery was deleted', { reason: 'endpoint_deleted' });
      }
      const now = iso(this.deps.clock.now());
      const patch = { status: 'pending' as const, schedule_attempts: 0, next_attempt_at: now, updated_at: now };
      const res = await em
        .createQueryBuilder()
        .update(WebhookDeliveryEntity)
        .set(patch)
        .where('id = :id AND status = :status', { id, status: row.status })
        .execute();
      if (res.affected !== 1) throw conflict('the delivery is still pending; it is sent on its schedule', { reason: 'delivery_pending' });
      return presentDelivery({ ...row, ...patch });
    });
    this.deps.wake();
    return view;
  }

  /** `coinkeep webhooks replay --all-exhausted --since T`: every exhausted delivery created since T, resent. */
  async replayExhausted(accountId: string, since: string): Promise<{ replayed: number }> {
    const now = iso(this.deps.clock.now());
    const replayed = await this.deps.store.write(async (em) => {
      const rows = await em
        .createQueryBuilder(WebhookDeliveryEntity, 'd')
        .leftJoin(WebhookEndpointEntity.options.name, 'e', 'e.id = d.endpoint_id')
        .where('d.account_id = :accountId AND d.status = :exhausted AND d.created_at >= :since', { accountId, exhausted: 'exhausted', since })
        .andWhere('(d.endpoint_id IS NULL OR e.id IS NOT NULL)')
        .select(['d.id'])
        .getMany();
      for (const r of rows) {
        await em.update(
          WebhookDeliveryEntity,
          { id: r.id, status: 'exhausted' },
          { status: 'pending', schedule_attempts: 0, next_attempt_at: now, updated_at: now },
        );
      }
      return rows.length;
    });
    this.deps.wake();
    return { replayed };
  }

  /** A signed `ping` to one endpoint (SPEC "Events"): an outbox event whose delivery exists when this returns. */
  async ping(accountId: string, endpointId: string, message: string): Promise<DeliveryView> {
    const eventId = await this.deps.store.write(async (em) => {
      const endpoint = await em.findOne(WebhookEndpointEntity, { where: { id: endpointId, account_id: accountId } });
      if (!endpoint) throw notFound('webhook endpoint');
      if (!endpoint.enabled) throw conflict('the endpoint is disabled', { reason: 'endpoint_disabled' });
      const event = await this.deps.outbox.emit(em, {
        accountId,
        type: 'ping',
        data: { endpoint_id: endpointId, message },
        objectId: endpointId,
        at: this.deps.clock.now(),
      });
      return event.id;
    });
    await this.deps.fanOut();
    // The newest end of the account's index: the ping's delivery was made just now.
    const row = await this.deps.store.read.findOneOrFail(WebhookDeliveryEntity, {
      where: { account_id: accountId, event_id: eventId },
      order: { created_at: 'DESC', id: 'DESC' },
    });
    this.deps.wake();
    return presentDelivery(row);
  }

  private async find(accountId: string, id: string): Promise<WebhookDeliveryRow> {
    const row = await this.deps.store.read.findOne(WebhookDeliveryEntity, { where: { id, account_id: accountId } });
    if (!row) throw notFound('webhook delivery');
    return row;
  }
}
