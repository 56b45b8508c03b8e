import { accountApi } from '../auth/account.api';
import { staticAddressApi } from '../static-addresses/static-address.api';
import { refundApi } from '../refunds/refund.api';
import { strayApi } from '../strays/stray.api';
import { catalogApi } from '../catalog/catalog.api';
import { embedApi } from '../checkout/embed.api';
import { invoiceApi } from '../invoices/invoice.api';
import type { ApiRoute } from '../shared/api-route';
import { transactionApi } from '../transactions/transaction.api';
import { EVENT_SCHEMAS, webhookApi } from '../webhooks/webhook.api';
import { withdrawalApi } from '../withdrawals/withdrawal.api';
import { buildOpenApi } from './openapi';
import { openApiRoute } from './openapi.routes';

/**
 * Every route of the merchant API (`/v1`), as each module declares it. The routers mount by these
 * declarations; a module's new routes join the document by being listed here.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  openApiRoute,
  ...Object.values(catalogApi),
  ...Object.values(invoiceApi),
  ...Object.values(staticAddressApi),
  ...Object.values(strayApi),
  ...Object.values(withdrawalApi),
  ...Object.values(refundApi),
  ...Object.values(transactionApi),
  ...Object.values(webhookApi),
  ...Object.values(accountApi),
  ...Object.values(embedApi),
];

let built: Record<string, unknown> | undefined;
/** The OpenAPI document (built once per process). */
export const openApiDocument = (): Record<string, unknown> => (built ??= buildOpenApi(API_ROUTES, EVENT_SCHEMAS));
