/**
 * Every call the client makes: method and path template. A test holds these against the OpenAPI
 * document, so a client method cannot name a route the API does not serve.
 */
export const CLIENT_ROUTES = {
  'invoices.create': ['POST', '/v1/invoices'],
  'invoices.list': ['GET', '/v1/invoices'],
  'invoices.get': ['GET', '/v1/invoices/{id}'],
  'invoices.cancel': ['POST', '/v1/invoices/{id}/cancel'],
  'addresses.create': ['POST', '/v1/addresses'],
  'addresses.list': ['GET', '/v1/addresses'],
  'addresses.get': ['GET', '/v1/addresses/{id}'],
  'addresses.archive': ['POST', '/v1/addresses/{id}/archive'],
  'addresses.restore': ['POST', '/v1/addresses/{id}/restore'],
  'withdrawals.estimate': ['POST', '/v1/withdrawals/estimate'],
  'withdrawals.create': ['POST', '/v1/withdrawals'],
  'withdrawals.list': ['GET', '/v1/withdrawals'],
  'withdrawals.get': ['GET', '/v1/withdrawals/{id}'],
  'withdrawals.cancel': ['POST', '/v1/withdrawals/{id}/cancel'],
  'strays.list': ['GET', '/v1/strays'],
  'strays.get': ['GET', '/v1/strays/{id}'],
  'strays.credit': ['POST', '/v1/strays/{id}/credit'],
  'strays.refund': ['POST', '/v1/strays/{id}/refund'],
  'transactions.list': ['GET', '/v1/transactions'],
  'transactions.get': ['GET', '/v1/transactions/{id}'],
  'balances.list': ['GET', '/v1/balances'],
  'webhooks.endpoints.list': ['GET', '/v1/webhooks/endpoints'],
  'webhooks.endpoints.create': ['POST', '/v1/webhooks/endpoints'],
  'webhooks.endpoints.get': ['GET', '/v1/webhooks/endpoints/{id}'],
  'webhooks.endpoints.update': ['PATCH', '/v1/webhooks/endpoints/{id}'],
  'webhooks.endpoints.delete': ['DELETE', '/v1/webhooks/endpoints/{id}'],
  'webhooks.endpoints.rotateSecret': ['POST', '/v1/webhooks/endpoints/{id}/rotate-secret'],
  'webhooks.deliveries.list': ['GET', '/v1/webhooks/deliveries'],
  'webhooks.deliveries.get': ['GET', '/v1/webhooks/deliveries/{id}'],
  'webhooks.deliveries.retry': ['POST', '/v1/webhooks/deliveries/{id}/retry'],
  'currencies.list': ['GET', '/v1/currencies'],
  'currencies.fiat': ['GET', '/v1/fiat-currencies'],
  'rates.get': ['GET', '/v1/rates'],
} as const satisfies Record<string, readonly [string, `/v1/${string}`]>;

export type RouteName = keyof typeof CLIENT_ROUTES;
