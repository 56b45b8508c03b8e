import type { ParsedUrlQuery } from 'node:querystring';
import type { Catalog, Coin } from '../catalog/coins';
import type { StaticAddressStatus } from '../db/entities/static-address';
import { validationError } from '../shared/errors';
import { isPrintable } from '../shared/text';
import { isUuid } from '../shared/ids';
import { checkShape } from '../shared/schema';
import { CreateStaticAddressBody } from './static-address.api';
import { STATIC_ADDRESS_STATUSES } from './static-address.state';
import { queryEnum, queryString, queryUuid } from '../shared/query';

/** A POST /v1/addresses body, checked field by field (PRODUCT §7). */
export interface CreateStaticAddressRequest {
  customerId: string;
  coin: Coin;
  label: string | null;
}

const CUSTOMER_ID_MAX = 128;
const LABEL_MAX = 200;

export function parseCreateStaticAddress(body: Record<string, unknown>, catalog: Catalog): CreateStaticAddressRequest {
  checkShape(CreateStaticAddressBody, body, 'an address request');
  const given = (k: string): boolean => body[k] !== undefined && body[k] !== null;

  const customerId = body.customer_id;
  if (typeof customerId !== 'string' || customerId.length === 0 || customerId.length > CUSTOMER_ID_MAX || !isPrintable(customerId)) {
    throw validationError('customer_id', `customer_id is required: 1 to ${CUSTOMER_ID_MAX} printable characters`);
  }

  let coin: Coin | undefined;
  if (given('coin_id')) {
    if (given('currency') || given('network')) throw validationError('coin_id', 'give coin_id, or currency with network, not both');
    if (!isUuid(body.coin_id)) throw validationError('coin_id', 'coin_id must be a coin id (uuid) from GET /v1/currencies');
    coin = catalog.coin(body.coin_id.toLowerCase());
    if (!coin) throw validationError('coin_id', 'coin_id is not a coin of the catalogue');
  } else {
    if (typeof body.currency !== 'string' || body.currency === '') throw validationError('coin_id', 'coin_id (or currency with network) is required');
    const coins = catalog.coinsByTicker(body.currency);
    if (coins.length === 0) throw validationError('currency', 'currency is not a coin ticker of the catalogue');
    if (given('network')) {
      if (typeof body.network !== 'string') throw validationError('network', 'network must be a string');
      coin = coins.find((c) => c.network === body.network);
      if (!coin) throw validationError('network', `${body.currency} is not offered on network ${body.network}`, { supported: coins.map((c) => c.network) });
    } else if (coins.length === 1) {
      coin = coins[0];
    } else {
      throw validationError('network', `${body.currency} exists on several networks: name one`, { supported: coins.map((c) => c.network) });
    }
  }

  let label: string | null = null;
  if (given('label')) {
    if (typeof body.label !== 'string' || body.label.length > LABEL_MAX || (body.label !== '' && !isPrintable(body.label))) {
      throw validationError('label', `label must be text of at most ${LABEL_MAX} printable characters`);
    }
    label = body.label;
  }
  return { customerId, coin: coin!, label };
}

/** The filters of GET /v1/addresses (and of its export). */
export interface StaticAddressFilters {
  status?: StaticAddressStatus;
  /** A substring (from 3 characters; shorter, a prefix) of the address, the customer id or the label. */
  search?: string;
  coin_id?: string;
  customer_id?: string;
}

const SEARCH_MAX = 200;

export function parseStaticAddressFilters(q: ParsedUrlQuery): StaticAddressFilters {
  const coinId = queryUuid(q, 'coin_id');
  const search = queryString(q, 'search');
  if (search !== undefined && (search.length === 0 || search.length > SEARCH_MAX))
    throw validationError('search', `search must be 1 to ${SEARCH_MAX} characters`);
  const customerId = queryString(q, 'customer_id');
  if (customerId !== undefined && (customerId.length === 0 || customerId.length > CUSTOMER_ID_MAX)) {
    throw validationError('customer_id', `customer_id must be 1 to ${CUSTOMER_ID_MAX} characters`);
  }
  return { status: queryEnum(q, 'status', STATIC_ADDRESS_STATUSES), search, coin_id: coinId, customer_id: customerId };
}
