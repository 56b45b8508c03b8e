import type { BroadcastAnswer } from '../types';

/**
 * What a Bitcoin node's answer to `sendrawtransaction` says of the transaction (PRODUCT §14), read
 * from Bitcoin Core's reject reasons (bcoin relays without answering). `known`: the node holds it
 * already, in its mempool or its chain. `refused`: the transaction itself breaks a rule that no
 * later block or mempool changes (its scripts, its size, its outputs, a fee below the relay floor
 * or above the node's ceiling). Anything else is `unsure`: "missing inputs" may mean it was mined
 * (and its outputs spent since), a mempool conflict or an unpaid replacement may be our own earlier
 * candidate, a full mempool or a node that is warming up changes; the chain core decides those.
 */
const KNOWN = /already in (the )?(block ?chain|utxo set|mempool)|txn-already-(in-mempool|known)|outputs already in utxo/i;
const REFUSED =
  /scriptpubkey|\bdust\b|tx-size|bare-multisig|multi-op-return|scriptsig-(size|not-pushonly)|script-verify-flag|bad-txns-(?!inputs-missingorspent)|bad-witness|decode failed|min relay fee not met|max-?fee-?exceeded|absurdly-high-fee|exceeds maximum configured|non-?standard/i;

/** `code`: the JSON-RPC error code when the node answered with one, null for a request that got no answer. */
export function btcBroadcastAnswer(code: number | null, message: string): BroadcastAnswer {
  if (code === null) return 'unsure';
  if (code === -27 || KNOWN.test(message)) return 'known';
  // -22: the bytes are not a transaction; -26/-25 with a reason about the transaction itself.
  if (code === -22 || REFUSED.test(message)) return 'refused';
  return 'unsure';
}
