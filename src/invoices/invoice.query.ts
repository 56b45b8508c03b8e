import type { ParsedUrlQuery } from 'node:querystring';
import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import { InvoiceEntity, type InvoiceRow, type InvoiceStatus } from '../db/entities/money';
import { queryEnum, queryString, queryTime } from '../shared/query';
import { validationError } from '../shared/errors';

export const INVOICE_STATUSES: readonly InvoiceStatus[] = ['new', 'pending', 'paid', 'underpaid', 'expired', 'cancelled'];

/** The filters of GET /v1/invoices (and of its CSV/XLSX export). */
export interface InvoiceFilters {
  status?: InvoiceStatus;
  /** Inclusive, normalised RFC 3339 UTC. */
  created_from?: string;
  /** Exclusive. */
  created_to?: string;
  order_id?: string;
}

/** Reads the filters from a query string; a bad value is validation_error on its name. */
export function parseInvoiceFilters(q: ParsedUrlQuery): InvoiceFilters {
  const f: InvoiceFilters = {
    status: queryEnum(q, 'status', INVOICE_STATUSES),
    created_from: queryTime(q, 'created_from'),
    created_to: queryTime(q, 'created_to'),
    order_id: queryString(q, 'order_id'),
  };
  if (f.order_id !== undefined && (f.order_id.length === 0 || f.order_id.length > 128)) {
    throw validationError('order_id', 'order_id must be 1 to 128 characters');
  }
  return f;
}

/**
 * One account's invoices matching the filters, newest first (created_at DESC, id DESC), with no
 * limit: the list route adds a keyset page to it, exports stream it whole.
 */
export function listInvoicesQuery(em: EntityManager, accountId: string, filters: InvoiceFilters): SelectQueryBuilder<InvoiceRow> {
  const qb = em.createQueryBuilder(InvoiceEntity, 'i').where('i.account_id = :accountId', { accountId });
  if (filters.status !== undefined) qb.andWhere('i.status = :status', { status: filters.status });
  if (filters.created_from !== undefined) qb.andWhere('i.created_at >= :from', { from: filters.created_from });
  if (filters.created_to !== undefined) qb.andWhere('i.created_at < :to', { to: filters.created_to });
  if (filters.order_id !== undefined) qb.andWhere('i.order_id = :orderId', { orderId: filters.order_id });
  return qb.orderBy('i.created_at', 'DESC').addOrderBy('i.id', 'DESC');
}
