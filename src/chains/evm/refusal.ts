import type { BroadcastAnswer } from '../types';

/**
 * What an EVM node's answer to `eth_sendRawTransaction` says of the transaction (PRODUCT §14), from
 * the error strings of geth, erigon, Besu, Nethermind and the hosted endpoints. `known`: the node
 * holds it already. `refused`: the bytes break a rule no later block changes (signature, chain id,
 * intrinsic gas, gas above the block limit, a tip above the fee cap, a type the chain does not take,
 * a fee above the node's cap). Anything else is `unsure`: "nonce too low" may be our own transaction
 * mined, an underpriced replacement may be our earlier candidate, insufficient funds change when a
 * sweep arrives, a base fee above the cap falls again, rate limits and busy nodes pass.
 */
const KNOWN =
  /already known|already imported|alreadyknown|known transaction|transaction already exists|already in (the )?(pool|mempool)|transaction_already_known/i;
const REFUSED =
  /invalid sender|invalid signature|invalid chain ?id|chain ?id mismatch|only replay-protected|intrinsic gas too low|exceeds block gas limit|gas limit reached|max priority fee per gas higher than max fee per gas|tip higher than fee cap|fee cap.*too high|oversized data|(tx|transaction) type not supported|negative value|exceeds the configured cap|\brlp\b|could not decode|invalid transaction/i;

/** `answered`: the node answered with a JSON-RPC error (false for a request that got no answer). */
export function evmBroadcastAnswer(answered: boolean, message: string): BroadcastAnswer {
  if (KNOWN.test(message)) return 'known';
  return answered && REFUSED.test(message) ? 'refused' : 'unsure';
}

/**
 * An answer that says the transaction's nonce is used already, by a transaction mined or waiting
 * that pays at least as much: geth's "nonce too low" and "replacement transaction underpriced",
 * erigon's "could not replace existing tx", Besu's "Nonce too low" and "Replacement transaction
 * underpriced", older Nethermind's "OldNonce" (and "ReplacementNotAllowed"). Never a refusal on its
 * own: the nonce may be taken by this very transaction (PRODUCT §14).
 */
export const evmNonceTaken = (message: string): boolean =>
  /nonce too low|nonce.*already|already.*nonce|replacement transaction underpriced|could not replace existing tx|old ?nonce|replacementnotallowed|nonce_too_low/i.test(
    message,
  );
