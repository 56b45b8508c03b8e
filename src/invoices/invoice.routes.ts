import { authOf } from '../auth/auth.middleware';
import type { InvoiceRow } from '../db/entities/money';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { pathId } from '../http/path-id';
import { fieldColumns, listHandler, type ExportableList } from '../http/export';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import { invoiceApi } from './invoice.api';
import { parseCreateInvoice, type RequestParserDeps } from './invoice.request';
import { parseInvoiceFilters, type InvoiceFilters } from './invoice.query';
import type { InvoiceService } from './invoice.service';
import type { InvoiceView } from './invoice.view';

export interface InvoiceRouteDeps extends RequestParserDeps {
  invoices: InvoiceService;
  /** The auth and Idempotency-Key guards `mount` builds each route's from (its declaration says which). */
  guards: RouteGuards;
  clock: Clock;
  logger: Logger;
}

/** POST/GET /v1/invoices, GET /v1/invoices/{id}, POST /v1/invoices/{id}/cancel and /accept. */
export function invoiceRoutes(deps: InvoiceRouteDeps): AppRouter {
  const r = newRouter();
  const { invoices } = deps;
  const idOf = (raw: string | undefined) => pathId(raw, 'invoice');

  mount(r, invoiceApi.create, deps.guards, async (ctx) => {
    const { accountId } = authOf(ctx);
    const req = await parseCreateInvoice(ctx.state.body, deps, accountId);
    const { invoice, created } = await invoices.create(accountId, req);
    ctx.status = created ? 201 : 200;
    ctx.body = invoice;
  });

  const list: ExportableList<InvoiceFilters, InvoiceView, InvoiceRow> = {
    name: 'invoices',
    columns: fieldColumns(FIELDS),
    parseFilters: parseInvoiceFilters,
    source: invoices,
  };
  mount(r, invoiceApi.list, deps.guards, listHandler(list, deps));

  mount(r, invoiceApi.get, deps.guards, async (ctx) => {
    ctx.body = await invoices.get(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, invoiceApi.cancel, deps.guards, async (ctx) => {
    ctx.body = await invoices.cancel(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  mount(r, invoiceApi.accept, deps.guards, async (ctx) => {
    ctx.body = await invoices.accept(authOf(ctx).accountId, idOf(ctx.params.id));
  });

  return r;
}

/**
 * Every field of the invoice as GET returns it, in the same order (SPEC "Invoice (payment)"): the
 * columns of an export; metadata and allowed_coin_ids as their JSON.
 */
const FIELDS = [
  'id',
  'status',
  'currency',
  'amount',
  'coin_id',
  'ticker',
  'network',
  'address',
  'amount_crypto',
  'payer_amount',
  'paid_amount',
  'remaining_amount',
  'overpaid_amount',
  'refunded_amount',
  'resolution',
  'amount_fiat',
  'fiat_currency',
  'rate_locked',
  'rate_locked_at',
  'late_payment',
  'fee_paid_by',
  'order_id',
  'description',
  'return_url',
  'webhook_url',
  'metadata',
  'allowed_coin_ids',
  'checkout_url',
  'ttl_expires_at',
  'expired_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof InvoiceView>;
