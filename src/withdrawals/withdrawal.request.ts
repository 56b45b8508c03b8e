import { z } from 'zod';
import type { Catalog, Coin } from '../catalog/coins';
import type { ChainSender } from '../chains/types';
import type { NetworkFeeMode } from '../db/entities/withdrawals';
import { ApiError, validationError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import { Amount } from '../shared/amount';
import { checkShape, uuid } from '../shared/schema';
import { MAX_AMOUNT } from './withdraw-all';

/** The coin of a withdrawal and its chain's send half. */
export interface PayoutCoin {
  coin: Coin;
  sender: ChainSender & Required<Pick<ChainSender, 'payable' | 'minimumPayment'>>;
}

/** A withdrawal request whose fields have their types; the amount and address are checked later, in SPEC's order. */
export interface WithdrawalShape {
  payout: PayoutCoin;
  rawAmount: unknown;
  toAddress: string;
  payoutId: string | null;
  comment: string | null;
  feeMode: NetworkFeeMode;
}

export const addressRefused = (): ApiError => new ApiError(422, 'address_refused', 'this destination is not accepted');

/** The coin named by `coin_id`, if withdrawals of it are offered: its chain must have a payout engine. */
export function payoutCoinOf(raw: unknown, catalog: Catalog, senderOf: (chainId: string) => ChainSender | null): PayoutCoin {
  if (!isUuid(raw)) throw validationError('coin_id', 'coin_id must be a coin id (uuid) from GET /v1/currencies');
  const coin = catalog.coin(raw.toLowerCase());
  if (!coin) throw validationError('coin_id', 'coin_id is not a coin of the catalogue');
  const sender = senderOf(coin.chain_id);
  if (!sender?.payable || sender.minimumPayment === undefined) throw validationError('coin_id', 'withdrawals of this coin are not offered');
  return { coin, sender: sender as PayoutCoin['sender'] };
}

export function feeModeOf(raw: unknown): NetworkFeeMode {
  if (raw === undefined || raw === null) return 'reserved';
  if (raw !== 'reserved' && raw !== 'actual') throw validationError('network_fee_mode', 'network_fee_mode must be reserved or actual');
  return raw;
}

/** Every field's type and size (the body of POST /v1/withdrawals, PRODUCT §8). */
export function parseShape(body: Record<string, unknown>, catalog: Catalog, senderOf: (chainId: string) => ChainSender | null): WithdrawalShape {
  const shape = checkShape(CreateWithdrawalBody, body, 'a withdrawal request');
  const payout = payoutCoinOf(shape.coin_id, catalog, senderOf);
  return {
    payout,
    rawAmount: shape.amount,
    toAddress: shape.to_address,
    payoutId: shape.payout_id ?? null,
    comment: shape.comment ?? null,
    feeMode: shape.network_fee_mode ?? 'reserved',
  };
}

/** An estimate request (POST /v1/withdrawals/estimate, PRODUCT §8, §14): the amount, or `max`. */
export interface EstimateRequest {
  payout: PayoutCoin;
  amount: Amount | typeof MAX_AMOUNT;
  /** The destination, checked payable and not the wallet's own; null when not given. */
  to: string | null;
  feeMode: NetworkFeeMode;
}

export function parseEstimate(
  body: Record<string, unknown>,
  catalog: Catalog,
  senderOf: (chainId: string) => ChainSender | null,
  isOwnAddress: (chainId: string, address: string) => boolean,
): EstimateRequest {
  checkShape(EstimateBody, body, 'an estimate request');
  const payout = payoutCoinOf(body.coin_id, catalog, senderOf);
  const to = body.to_address === undefined || body.to_address === null ? null : body.to_address;
  if (to !== null && (typeof to !== 'string' || !payout.sender.payable(to) || isOwnAddress(payout.coin.chain_id, to))) throw addressRefused();
  return { payout, amount: body.amount === MAX_AMOUNT ? MAX_AMOUNT : parsePayoutAmount(body.amount, payout), to, feeMode: feeModeOf(body.network_fee_mode) };
}

/**
 * The amount to pay: a decimal string with at most the coin's decimals, positive, and at least
 * what one payment output of the chain may carry.
 */
export function parsePayoutAmount(raw: unknown, payout: PayoutCoin): Amount {
  const { coin, sender } = payout;
  const amount = Amount.parse(raw, { field: 'amount', decimals: coin.decimals });
  const minimum = Amount.fromBaseUnits(sender.minimumPayment, coin.decimals);
  if (amount.cmp(minimum) < 0) throw validationError('amount', `amount must be at least ${minimum.toString()} ${coin.ticker}`, { minimum: minimum.toString() });
  return amount;
}

/** The body of POST /v1/withdrawals (PRODUCT §8): types and sizes; coin, amount and address are checked after. */
export const CreateWithdrawalBody = z.strictObject({
  coin_id: uuid(),
  amount: z.string().min(1).max(100).meta({ description: "decimal string, at most the coin's decimals" }),
  to_address: z.string().min(1).max(128),
  payout_id: z
    .string()
    .regex(/^[\x20-\x7e]{1,128}$/)
    .nullish(),
  comment: z.string().max(500).nullish(),
  network_fee_mode: z.enum(['reserved', 'actual']).nullish(),
});

/** The body of POST /v1/withdrawals/estimate: the withdrawal's fields (the destination optional, the others ignored). */
export const EstimateBody = z.looseObject({
  coin_id: uuid(),
  amount: z
    .string()
    .min(1)
    .max(100)
    .meta({ description: 'decimal string, or "max": the largest amount whose total_debit fits the available balance (PRODUCT §14)' }),
  to_address: z.string().nullish(),
  network_fee_mode: z.enum(['reserved', 'actual']).nullish(),
});
