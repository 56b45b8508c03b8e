import { feeFor } from '../tx-size';

/** BIP125's incremental relay fee (Bitcoin Core's default): a replacement pays at least this over its own size. */
export const INCREMENTAL_SAT_PER_VBYTE = 1;

export interface ReplacedTransaction {
  /** What the inputs hold together, satoshi. */
  inputsTotal: bigint;
  /** What the payment outputs pay together (change excluded). */
  paymentsTotal: bigint;
  /** The fee the transaction being replaced pays. */
  fee: bigint;
  /** Estimated vsize with its change output, if it has one. */
  vsize: number;
  /** Its change output's value (0n: none) and vsize. */
  change: bigint;
  changeVsize: number;
  changeDust: bigint;
}

/**
 * The change and fee of a replacement of `tx` (same inputs, same payments) at `satPerVbyte`, by
 * BIP125: it pays more than the replaced fee by at least the incremental relay rate over its own
 * size, and at least the new rate. Only the change shrinks to pay it; change that would fall under
 * dust is dropped (what is left goes to the fee). Null when the change cannot cover it.
 */
export function replacementFee(tx: ReplacedTransaction, satPerVbyte: number): { change: bigint; fee: bigint; vsize: number } | null {
  const required = (vsize: number): bigint => {
    const byRate = feeFor(vsize, satPerVbyte);
    const byIncrement = tx.fee + feeFor(vsize, INCREMENTAL_SAT_PER_VBYTE);
    return byRate > byIncrement ? byRate : byIncrement;
  };
  const spare = tx.inputsTotal - tx.paymentsTotal;
  if (tx.change > 0n) {
    const fee = required(tx.vsize);
    if (spare - fee >= tx.changeDust) return { change: spare - fee, fee, vsize: tx.vsize };
  }
  const vsize = tx.change > 0n ? tx.vsize - tx.changeVsize : tx.vsize;
  return spare >= required(vsize) ? { change: 0n, fee: spare, vsize } : null;
}
