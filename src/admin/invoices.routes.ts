import { InvoiceEntity } from '../db/entities/money';
import type { Store } from '../db/store';
import { newRouter, type AppRouter } from '../http/context';
import type { InvoicePresenter } from '../invoices/invoice.view';
import { notFound } from '../shared/errors';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The operator's view of any account's invoice, by id (`coinkeep dev pay` reads what to pay). */
export function invoiceAdminRoutes(deps: { store: Store; presenter: InvoicePresenter }): AppRouter {
  const r = newRouter('/admin');
  r.get('/invoices/:id', async (ctx) => {
    const id = ctx.params.id!;
    const row = UUID_RE.test(id) ? await deps.store.read.findOneBy(InvoiceEntity, { id }) : null;
    if (!row) throw notFound('invoice');
    ctx.body = { account_id: row.account_id, ...deps.presenter.present(row) };
  });
  return r;
}
