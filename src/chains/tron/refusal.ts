import type { BroadcastAnswer } from '../types';

/**
 * What java-tron's answer to `broadcasthex` says of the transaction (PRODUCT §14). `known`:
 * DUP_TRANSACTION_ERROR. `refused`: a bad signature, a reference block the node does not have on its
 * chain, a transaction too large, or one already past its expiration. Anything else is `unsure`:
 * SERVER_BUSY, NO_CONNECTION, NOT_ENOUGH_EFFECTIVE_CONNECTION and BLOCK_UNSOLIDIFIED are about the
 * node; a balance, bandwidth or contract check may pass later. A Tron transaction that is never
 * mined is proven dead by its expiration passing under a final block, which the payouts check.
 */
const REFUSED = new Set(['SIGERROR', 'TAPOS_ERROR', 'TOO_BIG_TRANSACTION_ERROR', 'TRANSACTION_EXPIRATION_ERROR']);
/** Broadcast codes about the node itself (busy, without peers, not synced): it could not take the transaction now. */
const NODE_TROUBLE = new Set(['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION', 'BLOCK_UNSOLIDIFIED']);

/** Whether a broadcast's code says the node could not take any transaction now (NodeUnavailable, never a refusal). */
export const tronNodeTrouble = (code: unknown): boolean => typeof code === 'string' && NODE_TROUBLE.has(code);

export function tronBroadcastAnswer(got: { result?: unknown; code?: unknown }): BroadcastAnswer {
  if (got.result === true || got.code === 'DUP_TRANSACTION_ERROR') return 'known';
  return typeof got.code === 'string' && REFUSED.has(got.code) ? 'refused' : 'unsure';
}
