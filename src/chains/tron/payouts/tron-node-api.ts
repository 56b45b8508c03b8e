import type { TronTransactionInfo } from '../tron-adapter';
import type { BlockRef, BroadcastAnswer, FeeQuote, HoldingsQuery, SentStatus, SentTransaction } from '../../types';

/** What Tron sweeps and payouts need of their chain's node (TronAdapter; tests may give another). */
export interface TronNodeApi {
  tip(signal?: AbortSignal): Promise<BlockRef>;
  head(signal?: AbortSignal): Promise<{ height: number; blockId: string; timestamp: number }>;
  blockTime(height: number, signal?: AbortSignal): Promise<number>;
  feeQuote(signal?: AbortSignal): Promise<FeeQuote>;
  prices(
    signal?: AbortSignal,
  ): Promise<Record<'getEnergyFee' | 'getTransactionFee' | 'getCreateAccountFee' | 'getCreateNewAccountFeeInSystemContract', bigint>>;
  account(address: string, signal?: AbortSignal): Promise<{ exists: boolean; balance: bigint; stakedEnergy: bigint; delegatedEnergy: bigint }>;
  resources(address: string, signal?: AbortSignal): Promise<{ energy: number; bandwidth: number; freeBandwidth: number; energyPerTrx: number }>;
  holdings(query: HoldingsQuery, signal?: AbortSignal): Promise<Map<string, bigint>>;
  transferEnergy(from: string, to: string, token: string, amount: bigint, signal?: AbortSignal): Promise<number | null>;
  transactionInfo(txid: string, signal?: AbortSignal): Promise<TronTransactionInfo | null>;
  pending(txid: string, signal?: AbortSignal): Promise<boolean>;
  /** The node's answer to a broadcast, as it is: what it says of the transaction (known, refused, unsure) and its code. */
  send(rawHex: string, signal?: AbortSignal): Promise<{ answer: BroadcastAnswer; code: string; message: string }>;
  broadcast(rawHex: string, signal?: AbortSignal): Promise<string>;
  sentStatus(sent: SentTransaction, signal?: AbortSignal): Promise<SentStatus>;
}

/** Bandwidth bytes a transaction takes (its signed protobuf and the 64 of its result), rounded up: a TRX payment, a TRC-20 transfer, a Stake 2.0 contract. */
export const TRX_TRANSFER_BYTES = 270;
export const TOKEN_TRANSFER_BYTES = 350;
/** fee_limit over a call's energy at the current price: the price or the recipient's storage may move before it is mined. */
export const FEE_LIMIT_MARGIN_PERCENT = 20n;
/** What an activation pays the new account (sun): the least TRX payment; the chain's creation fee is the gas station's. */
export const ACTIVATION_SUN = 1n;
export const SUN_PER_TRX = 1_000_000n;
