import type { Catalog, Coin } from '../catalog/coins';
import type { FeePaidBy } from '../db/entities/money';
import { ApiError, unavailable, validationError } from '../shared/errors';
import { isPrintable } from '../shared/text';
import { isUuid } from '../shared/ids';
import { Amount } from '../shared/amount';
import type { TargetGuard } from '../shared/target-guard';
import { checkShape } from '../shared/schema';
import { CreateInvoiceBody } from './invoice.api';

/** A POST /v1/invoices body, checked field by field (SPEC "POST /v1/invoices", PRODUCT §6). */
export interface CreateInvoiceRequest {
  amount: Amount;
  currency: string;
  /** The currency is a fiat code (priced through the rate engine) or a coin ticker. */
  fiat: boolean;
  /** Fixed now by `coin_id`, else null (the payer chooses). */
  coin: Coin | null;
  /** The kept allowed coins; null when the field was not sent. */
  allowedCoinIds: string[] | null;
  orderId: string | null;
  idempotencyByOrderId: boolean;
  description: string | null;
  returnUrl: string | null;
  webhookUrl: string | null;
  metadata: Record<string, string> | null;
  feePaidBy: FeePaidBy;
}

export const METADATA_MAX_PAIRS = 20;
export const METADATA_MAX_BYTES = 4096;
const ORDER_ID_MAX = 128;
const DESCRIPTION_MAX = 1000;
const URL_MAX = 2048;
const ALLOWED_MAX = 100;

/** SPEC rule 4 of the invoice fields: only invoice coins of this currency (a ticker keeps its own networks), none in maintenance. */
export function offersCoin(catalog: Catalog, currency: string, fiat: boolean, c: Coin): boolean {
  return c.invoice_enabled && !catalog.inMaintenance(c.id) && (fiat || c.ticker === currency);
}

/** Whether an invoice's currency is a fiat code (else a coin ticker). */
export const isFiat = (catalog: Catalog, currency: string): boolean => catalog.fiats().some((f) => f.code === currency);

export const noAllowedCoins = (): ApiError => new ApiError(422, 'no_allowed_coins', 'no allowed coin is left for this currency');

export interface RequestParserDeps {
  catalog: Catalog;
  guard: TargetGuard;
  /** `http://` return URLs are accepted on a test-network environment only. */
  testnet: boolean;
}

export async function parseCreateInvoice(body: Record<string, unknown>, deps: RequestParserDeps, accountId: string): Promise<CreateInvoiceRequest> {
  const { catalog } = deps;
  checkShape(CreateInvoiceBody, body, 'an invoice request');
  const given = (k: string): boolean => body[k] !== undefined && body[k] !== null;

  // currency decides the decimals of amount.
  if (typeof body.currency !== 'string' || body.currency === '') throw validationError('currency', 'currency is required: a fiat code or a coin ticker');
  const currency = body.currency;
  const fiat = catalog.fiats().find((f) => f.code === currency);
  const tickerCoins = fiat ? [] : catalog.coinsByTicker(currency);
  if (!fiat && tickerCoins.length === 0) {
    throw validationError(
      'currency',
      `currency must be an enabled fiat (${catalog
        .fiats()
        .map((f) => f.code)
        .join(', ')}) or a coin ticker of the catalogue`,
    );
  }
  if (fiat && !fiat.invoice_enabled) throw validationError('currency', `${currency} is not enabled for invoices`);

  let coin: Coin | null = null;
  if (given('coin_id')) {
    if (!isUuid(body.coin_id)) throw validationError('coin_id', 'coin_id must be a coin id (uuid) from GET /v1/currencies');
    coin = catalog.coin(body.coin_id.toLowerCase()) ?? null;
    if (!coin) throw validationError('coin_id', 'coin_id is not a coin of the catalogue');
    if (!coin.invoice_enabled) throw validationError('coin_id', 'this coin is not offered for invoices');
    if (!fiat && coin.ticker !== currency) throw validationError('coin_id', `coin_id is not a ${currency} coin`);
  }

  if (body.amount === undefined || body.amount === null) throw validationError('amount', 'amount is required');
  const decimals = fiat ? fiat.decimals : coin ? coin.decimals : Math.min(...tickerCoins.map((c) => c.decimals));
  const amount = Amount.parse(body.amount, { field: 'amount', decimals });

  const orderId = optString(body, 'order_id', ORDER_ID_MAX);
  let idempotencyByOrderId = false;
  if (given('idempotency_by_order_id')) {
    if (typeof body.idempotency_by_order_id !== 'boolean') throw validationError('idempotency_by_order_id', 'idempotency_by_order_id must be a boolean');
    idempotencyByOrderId = body.idempotency_by_order_id;
    if (idempotencyByOrderId && orderId === null) throw validationError('order_id', 'order_id is required with idempotency_by_order_id');
  }
  const description = optString(body, 'description', DESCRIPTION_MAX);
  const returnUrl = given('return_url') ? checkReturnUrl(body.return_url, deps.testnet) : null;
  const webhookUrl = given('webhook_url') ? await deps.guard.checkUrl(body.webhook_url, 'webhook_url', accountId) : null;
  const metadata = given('metadata') ? checkMetadata(body.metadata) : null;

  let feePaidBy: FeePaidBy = 'merchant';
  if (given('fee_paid_by')) {
    if (body.fee_paid_by !== 'merchant' && body.fee_paid_by !== 'payer') throw validationError('fee_paid_by', 'fee_paid_by must be merchant or payer');
    feePaidBy = body.fee_paid_by;
  }

  const offered = (c: Coin): boolean => offersCoin(catalog, currency, fiat !== undefined, c);
  let allowedCoinIds: string[] | null = null;
  if (given('allowed_coin_ids')) {
    const list = body.allowed_coin_ids;
    if (!Array.isArray(list)) throw validationError('allowed_coin_ids', 'allowed_coin_ids must be an array of coin ids');
    if (list.length === 0) throw validationError('allowed_coin_ids', 'allowed_coin_ids must not be empty');
    if (list.length > ALLOWED_MAX) throw validationError('allowed_coin_ids', `allowed_coin_ids has more than ${ALLOWED_MAX} entries`);
    const kept: string[] = [];
    for (const id of list) {
      if (!isUuid(id)) throw validationError('allowed_coin_ids', 'allowed_coin_ids must hold coin ids (uuid)');
      const c = catalog.coin(id.toLowerCase());
      if (!c) throw validationError('allowed_coin_ids', `${id} is not a coin of the catalogue`);
      if (offered(c) && !kept.includes(c.id)) kept.push(c.id);
    }
    if (kept.length === 0) throw noAllowedCoins();
    allowedCoinIds = kept;
  } else if (!coin && !catalog.coins().some(offered)) {
    throw noAllowedCoins();
  }

  if (coin) {
    if (allowedCoinIds && !allowedCoinIds.includes(coin.id) && !catalog.inMaintenance(coin.id)) {
      throw validationError('coin_id', 'coin_id is not among allowed_coin_ids');
    }
    if (catalog.inMaintenance(coin.id)) throw unavailable('this coin is in maintenance; retry later');
  }

  return {
    amount,
    currency,
    fiat: fiat !== undefined,
    coin,
    allowedCoinIds,
    orderId,
    idempotencyByOrderId,
    description,
    returnUrl,
    webhookUrl,
    metadata,
    feePaidBy,
  };
}

function optString(body: Record<string, unknown>, field: string, max: number): string | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw validationError(field, `${field} must be a string`);
  if (v.length === 0 || v.length > max) throw validationError(field, `${field} must be 1 to ${max} characters`);
  if (!isPrintable(v)) throw validationError(field, `${field} must not contain control characters`);
  return v;
}

function checkReturnUrl(value: unknown, testnet: boolean): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > URL_MAX) {
    throw validationError('return_url', `return_url must be a URL of at most ${URL_MAX} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validationError('return_url', 'return_url is not a valid URL');
  }
  const schemes = testnet ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw validationError('return_url', `return_url must be an ${testnet ? 'http(s)' : 'https'}:// URL`);
  if (url.username !== '' || url.password !== '') throw validationError('return_url', 'return_url must not carry a user name or password');
  return url.href;
}

function checkMetadata(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError('metadata', 'metadata must be an object of string pairs');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA_MAX_PAIRS) throw validationError('metadata', `metadata has more than ${METADATA_MAX_PAIRS} pairs`);
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (k === '') throw validationError('metadata', 'metadata keys must not be empty');
    if (typeof v !== 'string') throw validationError('metadata', `metadata values must be strings (${k} is not)`);
    out[k] = v;
  }
  if (Buffer.byteLength(JSON.stringify(out), 'utf8') > METADATA_MAX_BYTES) {
    throw validationError('metadata', `metadata is larger than ${METADATA_MAX_BYTES} bytes`);
  }
  return out;
}
