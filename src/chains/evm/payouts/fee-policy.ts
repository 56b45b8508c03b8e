import type { FeeCeiling } from '../../../payouts/fee-ceiling';
import type { EvmFees, EvmNode } from './evm-node';
import type { ModelCosts } from '../fee-model';

/**
 * The node's fees for the next block: its base fee, the market's tip, and a fee cap with room for
 * the base fee to grow. On a chain without EIP-1559 (`legacy`) the base fee is 0 and both caps are
 * the gas price: every rule below then works on the gas price (geth's legacy replacement rule is
 * the same 10% bump).
 */
export interface EvmQuote extends EvmFees, ModelCosts {
  baseFeePerGas: bigint;
}

/** The last quote of each node: what a send signed without one (a filler) knows of its chain's model. */
const lastQuotes = new WeakMap<object, EvmQuote>();

export async function evmQuote(node: Pick<EvmNode, 'feeQuote'>, signal?: AbortSignal): Promise<EvmQuote> {
  const quote = await node.feeQuote(signal);
  if (quote.kind !== 'evm') throw new Error('not an EVM fee quote');
  const q: EvmQuote = {
    baseFeePerGas: quote.baseFeePerGas,
    maxFeePerGas: quote.maxFeePerGas,
    maxPriorityFeePerGas: quote.maxPriorityFeePerGas,
    ...(quote.legacy ? { legacy: true } : {}),
    ...(quote.transferGas !== undefined ? { transferGas: quote.transferGas } : {}),
    ...(quote.l1Fee !== undefined ? { l1Fee: quote.l1Fee } : {}),
  };
  lastQuotes.set(node, q);
  return q;
}

/** The model's costs of the node's last quote (none before the first). */
export const lastCosts = (node: object): ModelCosts => lastQuotes.get(node) ?? {};

/** What a transaction must offer per gas to be mined in the next block with the market's tip. */
export const asked = (q: EvmQuote): bigint => q.baseFeePerGas + q.maxPriorityFeePerGas;

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/** geth's replacement rule (its default price bump): both caps at least 10% above the replaced ones; a tenth and one wei more is asked. */
const bump = (v: bigint): bigint => v + v / 10n + 1n;

/**
 * The fees of a new transaction (`kind`: what it is for): the quote with its fee cap at most the
 * ceiling; null when the quote asks more than the ceiling: it waits, named in `coinkeep status`.
 */
export function newFees(ceiling: FeeCeiling, kind: 'payouts' | 'sweeps', q: EvmQuote): EvmFees | null {
  if (!ceiling.admits(kind, asked(q))) return null;
  return typed(q, { maxPriorityFeePerGas: q.maxPriorityFeePerGas, maxFeePerGas: min(q.maxFeePerGas, ceiling.max) });
}

/**
 * The fees of a replacement of a transaction offering `old`. None while it offers what the quote
 * asks: a higher fee would not buy it a place sooner (a market that does not move never pays
 * more). Otherwise at the quote, each cap at least bumped by the replacement rule, the fee cap at
 * most the ceiling; null when the rule cannot be met under the ceiling (it waits at its fees,
 * named in `coinkeep status` while the quote is above the ceiling).
 */
export function replacementFees(ceiling: FeeCeiling, old: EvmFees, q: EvmQuote): EvmFees | null {
  if (old.maxFeePerGas >= asked(q) && old.maxPriorityFeePerGas >= q.maxPriorityFeePerGas) return null;
  ceiling.admits('replacements', asked(q));
  const tip = max(q.maxPriorityFeePerGas, bump(old.maxPriorityFeePerGas));
  const cap = min(max(max(q.maxFeePerGas, bump(old.maxFeePerGas)), tip), ceiling.max);
  if (cap < bump(old.maxFeePerGas) || cap < tip) return null;
  return typed(q, { maxPriorityFeePerGas: tip, maxFeePerGas: cap });
}

/**
 * The fees of a filler taking a given-back nonce (EvmSendQueue.fillGap): the given-back send's
 * fees bumped by the replacement rule (a node may still hold it), at most the ceiling.
 */
export function fillerFees(old: EvmFees, ceilingMax: bigint): EvmFees {
  const cap = min(bump(old.maxFeePerGas), ceilingMax);
  return typed(old, { maxFeePerGas: cap, maxPriorityFeePerGas: min(bump(old.maxPriorityFeePerGas), cap) });
}

/**
 * The fees of a cancel (`coinkeep payouts cancel`) of a transaction offering `old`: it must replace
 * it whatever the market does, so each cap is bumped by the replacement rule and at least the
 * quote, the fee cap at most the ceiling; null when the rule cannot be met under it.
 */
export function cancelFees(ceiling: FeeCeiling, old: EvmFees, q: EvmQuote): EvmFees | null {
  const tip = max(q.maxPriorityFeePerGas, bump(old.maxPriorityFeePerGas));
  const cap = min(max(max(q.maxFeePerGas, bump(old.maxFeePerGas)), tip), ceiling.max);
  return cap < bump(old.maxFeePerGas) || cap < tip ? null : typed(q, { maxPriorityFeePerGas: tip, maxFeePerGas: cap });
}

/** `fees` of the transaction type `of` says (legacy on a chain without EIP-1559). */
const typed = (of: { legacy?: boolean }, fees: EvmFees): EvmFees => (of.legacy ? { ...fees, legacy: true } : fees);
