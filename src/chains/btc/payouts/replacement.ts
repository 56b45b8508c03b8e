import { feeFor } from '../tx-size';

/** BIP125's incremental relay fee (Bitcoin Core's default): a replacement pays at least this over its own size. */
export const INCREMENTAL_SAT_PER_VBYTE = 1;
/**
 * Bitcoin Core's default `maxfeerate` of `sendrawtransaction` (0.10 BTC/kvB): it refuses a
 * transaction whose fee over its vsize is above it. Nothing is signed above it (sign checks the
 * signed size).
 */
export const NODE_MAX_SAT_PER_VBYTE = 10_000;
/**
 * The highest rate a transaction is priced at: under the node's maximum by more than the size
 * estimate's margin (every signature counted at its longest), so what is signed stays under it.
 */
export const BUILD_MAX_SAT_PER_VBYTE = 9_000;

/**
 * The smallest fee a replacement of `vsize` may pay under BIP125 as Bitcoin Core applies it: at
 * least what every transaction it evicts pays (rule 3: the replaced one and its descendants in the
 * node's mempool, `conflictingFees`), plus the incremental relay fee over its own size (rule 4);
 * and at least `satPerVbyte`.
 */
export function replacementFloor(vsize: number, satPerVbyte: number, replacedFee: bigint, conflictingFees: bigint): bigint {
  const byRate = feeFor(vsize, satPerVbyte);
  const evicted = conflictingFees > replacedFee ? conflictingFees : replacedFee;
  const byRules = evicted + feeFor(vsize, INCREMENTAL_SAT_PER_VBYTE);
  return byRate > byRules ? byRate : byRules;
}

export interface ReplacedTransaction {
  /** What the inputs hold together, satoshi. */
  inputsTotal: bigint;
  /** What the payment outputs pay together (change excluded). */
  paymentsTotal: bigint;
  /** The fee the transaction being replaced pays. */
  fee: bigint;
  /** What the node's mempool holds of it with its descendants (getmempoolentry): their fees together; at most `fee` when unknown. */
  conflictingFees?: bigint;
  /** Estimated vsize with its change output, if it has one. */
  vsize: number;
  /** Its change output's value (0n: none) and vsize. */
  change: bigint;
  changeVsize: number;
  changeDust: bigint;
}

/**
 * The change and fee of a replacement of `tx` (same inputs, same payments) at `satPerVbyte`, by
 * BIP125 (replacementFloor): what the replaced transaction and its descendants pay, plus the
 * incremental relay rate over its own size, and at least the new rate. Only the change shrinks to pay it; change that would fall under
 * dust is dropped (what is left goes to the fee). Null when the change cannot cover it.
 */
export function replacementFee(tx: ReplacedTransaction, satPerVbyte: number): { change: bigint; fee: bigint; vsize: number } | null {
  const required = (vsize: number): bigint => replacementFloor(vsize, satPerVbyte, tx.fee, tx.conflictingFees ?? tx.fee);
  const spare = tx.inputsTotal - tx.paymentsTotal;
  if (tx.change > 0n) {
    const fee = required(tx.vsize);
    if (spare - fee >= tx.changeDust) return { change: spare - fee, fee, vsize: tx.vsize };
  }
  const vsize = tx.change > 0n ? tx.vsize - tx.changeVsize : tx.vsize;
  return spare >= required(vsize) ? { change: 0n, fee: spare, vsize } : null;
}
