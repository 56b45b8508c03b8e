import { z } from 'zod';
import type { ApiRoute } from '../shared/api-route';
import { decimal, timestamp, uuid } from '../shared/schema';

export const CurrencySchema = z
  .object({
    id: uuid(),
    ticker: z.string(),
    name: z.string(),
    network: z.string(),
    decimals: z.number().int(),
    invoice_enabled: z.boolean(),
    maintenance: z.boolean(),
  })
  .meta({ id: 'Currency' });

export const FiatCurrencySchema = z.object({ code: z.string(), decimals: z.number().int(), invoice_enabled: z.boolean() }).meta({ id: 'FiatCurrency' });

export const RateSchema = z
  .object({ coin_id: uuid(), ticker: z.string(), network: z.string(), rate: decimal().nullable(), updated_at: timestamp().nullable() })
  .meta({ id: 'Rate' });

/** The catalogue's routes (SPEC "Currency and fiat currency"). */
export const catalogApi = {
  currencies: {
    method: 'get',
    path: '/v1/currencies',
    operationId: 'listCurrencies',
    summary: 'The coins: signed, those enabled for the merchant; unsigned, the public catalogue',
    tag: 'currencies',
    auth: 'optional',
    permissions: ['read'],
    responses: { 200: z.object({ items: z.array(CurrencySchema) }) },
  },
  fiatCurrencies: {
    method: 'get',
    path: '/v1/fiat-currencies',
    operationId: 'listFiatCurrencies',
    summary: 'The default fiat and every enabled fiat with its decimals',
    tag: 'currencies',
    auth: 'signed',
    permissions: ['read'],
    responses: { 200: z.object({ default: z.string(), items: z.array(FiatCurrencySchema) }) },
  },
  rates: {
    method: 'get',
    path: '/v1/rates',
    operationId: 'listRates',
    summary: 'The rate of every coin in a fiat',
    tag: 'rates',
    auth: 'signed',
    permissions: ['read'],
    query: z.object({ fiat: z.string() }),
    responses: { 200: z.object({ fiat: z.string(), items: z.array(RateSchema) }) },
  },
} as const satisfies Record<string, ApiRoute>;
