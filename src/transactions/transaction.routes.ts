import type { ParsedUrlQuery } from 'node:querystring';
import { authOf } from '../auth/auth.middleware';
import { mount, newRouter, type AppRouter, type RouteGuards } from '../http/context';
import { fieldColumns, listHandler, type ExportableList, type ExportColumn } from '../http/export';
import { parsePageRequest, toPage } from '../shared/pagination';
import { queryEnum, queryTime, queryUuid } from '../shared/query';
import type { Clock } from '../shared/clock';
import { notFound, validationError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import type { Logger } from '../shared/logger';
import type { Catalog } from '../catalog/coins';
import type { Store } from '../db/store';
import { Ledger } from '../ledger/ledger';
import { transactionApi } from './transaction.api';
import { BalanceService } from './balance.service';
import {
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  TransactionService,
  type RawTransaction,
  type TransactionFilters,
  type TransactionView,
} from './transaction.service';

export interface TransactionRouteDeps {
  transactions: TransactionService;
  balances: BalanceService;
  guards: RouteGuards;
  clock: Clock;
  logger: Logger;
}

/** The filters of PRODUCT §9; an empty window (`to` not after `from`) is refused on `to`. */
export function parseTransactionFilters(q: ParsedUrlQuery): TransactionFilters {
  const f: TransactionFilters = {
    type: queryEnum(q, 'type', TRANSACTION_TYPES),
    status: queryEnum(q, 'status', TRANSACTION_STATUSES),
    coin_id: queryUuid(q, 'coin_id'),
    invoice_id: queryUuid(q, 'invoice_id'),
    address_id: queryUuid(q, 'address_id'),
    from: queryTime(q, 'from'),
    to: queryTime(q, 'to'),
  };
  if (f.from !== undefined && f.to !== undefined && f.to <= f.from) throw validationError('to', 'to must be later than from');
  return f;
}

/** The export's columns: the JSON fields, in the same order. */
export const TRANSACTION_COLUMNS: readonly ExportColumn<TransactionView>[] = fieldColumns<TransactionView>([
  'id',
  'type',
  'status',
  'coin_id',
  'ticker',
  'network',
  'amount',
  'fee',
  'net_amount',
  'txid',
  'confirmations',
  'invoice_id',
  'address_id',
  'withdrawal_id',
  'refund_id',
  'refunded_amount',
  'created_at',
  'confirmed_at',
]);

/** GET /v1/transactions (JSON pages, or an export with ?format=), GET /v1/transactions/{id}, GET /v1/balances. */
export function transactionRoutes(deps: TransactionRouteDeps): AppRouter {
  const { transactions, balances } = deps;
  const r = newRouter();

  const list: ExportableList<TransactionFilters, TransactionView, RawTransaction> = {
    name: 'transactions',
    columns: TRANSACTION_COLUMNS,
    parseFilters: parseTransactionFilters,
    source: {
      page: async (accountId, filters, page) => toPage(await transactions.page(accountId, filters, page), page, (t) => t),
      batches: (accountId, filters, after, size) => transactions.batches(accountId, filters, after, size),
      present: (r) => transactions.present(r),
      count: (accountId, filters, after, cap) => transactions.count(accountId, filters, after, cap),
    },
  };
  mount(r, transactionApi.list, deps.guards, listHandler(list, deps));

  mount(r, transactionApi.get, deps.guards, async (ctx) => {
    const id = ctx.params.id ?? '';
    const found = isUuid(id) ? await transactions.get(authOf(ctx).accountId, id.toLowerCase()) : null;
    if (!found) throw notFound('transaction');
    ctx.body = found;
  });

  mount(r, transactionApi.balances, deps.guards, async (ctx) => {
    const all = await balances.list(authOf(ctx).accountId);
    const page = parsePageRequest(ctx.query, { list: 'balances' });
    // Balances are few (one per coin) and ordered by coin id: the cursor's key is the last coin id.
    const rest = page.after ? all.filter((b) => b.coin_id > page.after!.id) : all;
    const rows = rest.slice(0, page.limit + 1).map((b) => ({ ...b, id: b.coin_id, created_at: '' }));
    ctx.body = toPage(rows, page, ({ id: _id, created_at: _c, ...b }) => b);
  });

  return r;
}

/** The read side wired from the daemon's parts (one line in daemon/main.ts). */
export function transactionsApi(deps: { store: Store; catalog: Catalog; clock: Clock; logger: Logger; guards: RouteGuards }): AppRouter {
  return transactionRoutes({
    transactions: new TransactionService(deps.store, deps.catalog),
    balances: new BalanceService(deps.store, new Ledger(deps.clock), deps.catalog),
    guards: deps.guards,
    clock: deps.clock,
    logger: deps.logger,
  });
}
