import { mount, newRouter, type AppContext, type AppRouter, type RouteGuards } from '../http/context';
import { queryString } from '../shared/query';
import { iso } from '../shared/clock';
import { validationError } from '../shared/errors';
import type { RateEngine } from '../rates/engine';
import type { Catalog } from './coins';
import { catalogApi } from './catalog.api';

export interface CatalogRouteDeps {
  catalog: Catalog;
  rates: RateEngine;
  /** The auth and Idempotency-Key guards `mount` builds each route's from (its declaration says which). */
  guards: RouteGuards;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A body serialised once: its bytes and type are set as they are (koa's type setter looks the type up on every call). */
const sendJson = (ctx: AppContext, json: Buffer): void => {
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.body = json;
};

/** GET /v1/currencies, /v1/fiat-currencies and /v1/rates (SPEC "Currency and fiat currency"). */
export function catalogRoutes(deps: CatalogRouteDeps): AppRouter {
  const { catalog, rates } = deps;
  const router = newRouter();

  // The public catalogue is served to anyone, often: its body is built once per maintenance change.
  let currencies = { version: -1, json: Buffer.alloc(0) };
  const currenciesJson = (): Buffer => {
    if (currencies.version !== catalog.maintenanceVersion) {
      const items = catalog.coins().map((c) => ({
        id: c.id,
        ticker: c.ticker,
        name: c.name,
        network: c.network,
        decimals: c.decimals,
        invoice_enabled: c.invoice_enabled,
        maintenance: catalog.inMaintenance(c.id),
      }));
      currencies = { version: catalog.maintenanceVersion, json: Buffer.from(JSON.stringify({ items })) };
    }
    return currencies.json;
  };

  const fiatsJson = Buffer.from(JSON.stringify({ default: catalog.defaultFiat, items: catalog.fiats() }));

  // A signed request will list the merchant's enabled coins once accounts carry that choice; until
  // then every merchant has the whole catalogue enabled.
  mount(router, catalogApi.currencies, deps.guards, (ctx) => sendJson(ctx, currenciesJson()));

  mount(router, catalogApi.fiatCurrencies, deps.guards, (ctx) => sendJson(ctx, fiatsJson));

  mount(router, catalogApi.rates, deps.guards, (ctx) => {
    const fiat = queryString(ctx.query, 'fiat');
    if (fiat === undefined) throw validationError('fiat', 'fiat is required');
    if (!catalog.isFiat(fiat))
      throw validationError(
        'fiat',
        `fiat must be one of ${catalog
          .fiats()
          .map((f) => f.code)
          .join(', ')}`,
      );
    const snapshot = rates.snapshot(fiat);
    ctx.body = {
      fiat,
      items: catalog.coins().map((c) => {
        const quote = snapshot.get(c.ticker) ?? null;
        return {
          coin_id: c.id,
          ticker: c.ticker,
          network: c.network,
          rate: quote?.rate ?? null,
          updated_at: quote ? iso(quote.updated_at) : null,
        };
      }),
    };
  });

  return router;
}
